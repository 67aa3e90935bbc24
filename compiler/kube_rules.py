"""The API server's own rules for what trainspec emits: one table, each rule with its upstream source
and the Kubernetes versions it applies to, and the checks themselves as plain functions.

`trainspec validate|compile|build --kube-version X.Y` chooses the version (KUBE_VERSIONS; default the
oldest, DEFAULT_KUBE_VERSION).  A rule whose `since`/`until` bound the version applies only inside
them; every other rule holds for the whole range.  docs/validation.md lists this table, and
tests/compiler/test_apiserver_verdicts.py runs recorded verdicts against it.

Each check returns the API server's own message (its wording, so a user can search for it), or
None.  Sources name files and functions of kubernetes/kubernetes unless another repository is named:
- core validation: pkg/apis/core/validation/validation.go
- apimachinery: staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go (IsQualifiedName ...)
- metav1 validation: staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go
Nothing here imports anything beyond the standard library: the compile path loads it for every spec.
"""

from __future__ import annotations

from typing import NamedTuple

from .kube import (
    DNS1035_LABEL,
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    LABEL_NAME,
    LABEL_VALUE,
    QUANTITY_MAX,
    Pattern,
)

KUBE_VERSIONS = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36")
DEFAULT_KUBE_VERSION = KUBE_VERSIONS[0]  # the oldest every target supports (docs/validation.md)


def parse_version(text: str) -> tuple[int, int]:
    """'1.32' or 'v1.32.4' -> (1, 32); ValueError outside KUBE_VERSIONS."""
    core = text.strip().lstrip("v")
    parts = core.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]) or f"{int(parts[0])}.{int(parts[1])}" \
            not in KUBE_VERSIONS:
        raise ValueError(f"Kubernetes version {text!r} is not supported; "
                         f"one of {KUBE_VERSIONS[0]}..{KUBE_VERSIONS[-1]}")
    return int(parts[0]), int(parts[1])


class Rule(NamedTuple):
    name: str
    source: str  # upstream file and function (or CRD field) the rule is taken from
    summary: str
    since: str = ""  # first Kubernetes version it applies to ("" = every supported one)
    until: str = ""  # last version it applies to, inclusive


def _v(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


RULES: tuple[Rule, ...] = (
    Rule("qualified-name", "apimachinery IsQualifiedName (via metav1 ValidateLabels, core ValidateAnnotations, "
         "ValidateLabelName)", "label, annotation, nodeSelector, toleration, selector and topology keys: "
         "[prefix/]name, the prefix a non-empty DNS subdomain, the name 1-63 characters"),
    Rule("label-value", "apimachinery IsValidLabelValue", "label values (and nodeSelector, toleration values, "
         "Kueue's queue-name label): at most 63 characters, alphanumeric at both ends"),
    Rule("annotations-size", "apimachinery/pkg/api/validation ValidateAnnotationsSize (TotalAnnotationSizeLimitB)",
         "an object's annotations at most 256 KiB of keys and values (metadata.annotations on every object; "
         "a role's podAnnotations on its pods)"),
    Rule("env-name-strict", "core validateEnvVarName -> apimachinery IsEnvVarName "
         "(RelaxedEnvironmentVariableValidation off: alpha in 1.30-1.31)",
         "environment variable names: letters, digits, '_', '-', '.', not starting with a digit", until="1.31"),
    Rule("env-name-relaxed", "core validateEnvVarName -> apimachinery IsRelaxedEnvVarName "
         "(pkg/features RelaxedEnvironmentVariableValidation: beta, on by default, 1.32; GA 1.34)",
         "environment variable names: any printable ASCII character but '='", since="1.32"),
    Rule("service-name-dns1035", "core ValidateServiceName = apimachinery NameIsDNS1035Label "
         "(RelaxedServiceNameValidation off: alpha in 1.34-1.35)", "the job name, which names its headless "
         "Service: a DNS-1035 label (starting with a letter)", until="1.35"),
    Rule("service-name-dns1123", "core ValidateServiceName -> NameIsDNS1123Label (pkg/features "
         "RelaxedServiceNameValidation, KEP-5311: beta, on by default, 1.36)", "the job name may start with a digit "
         "(a DNS-1123 label)", since="1.36"),
    Rule("port-name", "core ValidatePortNumOrName -> apimachinery IsValidPortName", "probe and hook ports: 1-65535 or "
         "a name of 1-15 lower-case letters, digits and '-', with a letter, no '--', no '-' at either end"),
    Rule("toleration", "core validateTolerations", "keys qualified names; an empty key needs operator Exists; "
         "Equal values label values; Exists takes no value; tolerationSeconds needs effect NoExecute"),
    Rule("node-selector", "core validateNodeSelector, validateNodeSelectorTerm, ValidateNodeSelectorRequirement, "
         "validateNodeFieldSelectorRequirement", "at least one term; keys qualified names; In/NotIn need values, "
         "Exists/DoesNotExist none, Gt/Lt one integer; matchFields only metadata.name, In/NotIn, one value"),
    Rule("pod-affinity-term", "core validatePodAffinityTerm, ValidatePodAffinityTermSelector, "
         "validateMatchLabelKeysAndMismatchLabelKeys; metav1 ValidateLabelSelector",
         "topologyKey a non-empty qualified name; namespaces DNS-1123 labels; matchLabelKeys only with a "
         "labelSelector, not in both it and labelSelector, not in mismatchLabelKeys"),
    Rule("seccomp-apparmor", "core validateSeccompProfileField, validateAppArmorProfileField, "
         "validateLocalDescendingPath", "type Localhost needs localhostProfile; localhostProfile only with type "
         "Localhost; a seccomp profile is a relative path without '..'"),
    Rule("privilege", "core ValidateSecurityContext, validateWindowsHostProcessPod", "allowPrivilegeEscalation: "
         "false with neither privileged: true nor CAP_SYS_ADMIN; no Windows hostProcess (it needs hostNetwork)"),
    Rule("exec-action", "core validateExecAction", "an exec probe or hook has a command"),
    Rule("proc-mount", "core validateProcMountType / ValidateSecurityContext", "procMount Unmasked needs the pod's "
         "hostUsers: false (which trainspec does not set)"),
    Rule("sysctls", "core validateSysctls", "sysctl names match the sysctl pattern (at most 253 characters), each "
         "name once"),
    Rule("ids", "core validatePodSecurityContext -> apimachinery IsValidUserID / IsValidGroupID",
         "runAsUser, runAsGroup, fsGroup and supplementalGroups: 0-2147483647"),
    Rule("windows-options", "core validateWindowsSecurityContextOptions", "gmsaCredentialSpecName a DNS subdomain; "
         "runAsUserName at most 256 characters, no control characters, DOMAIN\\user form"),
    Rule("container-resource-name", "core validateContainerResourceName, helper IsStandardContainerResourceName, "
         "IsExtendedResourceName", "cpu, memory, ephemeral-storage, hugepages-<size>, or a domain-prefixed extended "
         "resource (not under kubernetes.io, not starting with requests.)"),
    Rule("integer-resource", "core ValidateResourceQuantityValue (helper IsIntegerResourceName)",
         "extended resources are whole numbers"),
    Rule("hugepages", "core ValidateResourceRequirements, validateResourceQuantityHugePageValue",
         "hugepages need a cpu or memory request or limit, and a multiple of the page size"),
    Rule("quantity", "apimachinery/pkg/api/resource ParseQuantity; core ValidateNonnegativeQuantity",
         "a quantity; non-negative; trainspec also bounds it to int64 (nothing larger is scheduled)"),
    Rule("downward-divisor", "core validateContainerResourceDivisor", "resourceFieldRef divisor: 1m or 1 for cpu; "
         "1, 1k...1E, 1Ki...1Ei for memory and ephemeral-storage"),
    Rule("object-ref-name", "core validateSecretKeySelector / validateConfigMapKeySelector (ValidateSecretName, "
         "ValidateConfigMapName)", "a referenced Secret or ConfigMap name: a DNS subdomain of at most 253"),
    Rule("host-path", "core validateHostPathVolumeSource -> validatePathNoBacksteps", "a hostPath without '..'"),
    Rule("unique-mounts", "core ValidateVolumeMounts", "mount paths unique in a container (the MPI hostfile at "
         "/etc/mpi and the ssh keys at mpi.sshAuthMountPath included)"),
    Rule("probe-numbers", "core validateProbe (ValidateNonnegativeField; 0 is defaulted by SetDefaults_Probe)",
         "probe seconds and thresholds are >= 0"),
    Rule("scheduling-names", "core ValidatePodSpec (priorityClassName: ValidateDNS1123Subdomain); Kueue "
         "kueue.x-k8s.io/queue-name label (IsValidLabelValue); Volcano webhook schedulerName",
         "priorityClassName at most 253; queue at most 63 where it is a Kueue label (k8s, jobset, trainjob)"),
    Rule("job-selector-labels", "pkg/apis/batch/validation validateGeneratedSelector (job-name, controller-uid, "
         "batch.kubernetes.io/job-name, batch.kubernetes.io/controller-uid)",
         "these labels are the Job controller's: a user value breaks the Job's selector"),
    Rule("trainjob-crd", "kubeflow/trainer CRD trainer.kubeflow.org_trainjobs.yaml spec.trainer "
         "(command, args, env maxItems 128; image maxLength 500)", "limits of the TrainJob's trainer fields"),
    Rule("job-success-policy", "pkg/features JobSuccessPolicy (KEP-3998: alpha 1.30, beta and on by default 1.31, "
         "GA 1.33); batch validateSuccessPolicy", "an Indexed Job's successPolicy (the k8s target's deciding "
         "replica in a role of several pods); below 1.31 the role's Job completes when all of its pods have",
         since="1.31"),
    Rule("request-size", "apiserver MaxRequestBodyBytes (3 MiB); etcd --max-request-bytes (1.5 MiB default)",
         "every object at most 1.5 MiB as stored (under the 3 MiB request limit)"),
)
RULE_NAMES = {rule.name: rule for rule in RULES}


def applies(name: str, version: tuple[int, int]) -> bool:
    rule = RULE_NAMES[name]
    return (not rule.since or version >= _v(rule.since)) and (not rule.until or version <= _v(rule.until))


# --- names ----------------------------------------------------------------------------------------

KEY_EXPECTED = ("[prefix/]name: an optional DNS-subdomain prefix (non-empty, at most 253) and '/', then a name of "
                "1-63 letters, digits, '-', '_' or '.', starting and ending alphanumeric")
VALUE_EXPECTED = "at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric (or empty)"


def qualified_name_problem(key: str) -> str | None:
    """apimachinery IsQualifiedName, the API server's first message."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return "prefix part must be non-empty"
        if len(prefix) > 253:
            return "prefix part must be no more than 253 bytes"
        if not DNS1123_SUBDOMAIN.match(prefix):
            return ("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                    "'-' or '.', and must start and end with an alphanumeric character")
    else:
        return ("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character, with an optional DNS subdomain prefix and '/'")
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 bytes"
    if not LABEL_NAME.match(name):
        return ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character")
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 bytes"
    if not LABEL_VALUE.match(value):
        return ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character")
    return None


def subdomain_problem(value: str) -> str | None:
    if len(value) > 253:
        return "must be no more than 253 bytes"
    if not DNS1123_SUBDOMAIN.match(value):
        return ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character")
    return None


def dns_label_problem(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 bytes"
    if not DNS1123_LABEL.match(value):
        return ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
                "and end with an alphanumeric character")
    return None


_STRICT_ENV = Pattern(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


def env_name_problem(name: str, version: tuple[int, int]) -> str | None:
    if applies("env-name-relaxed", version):
        if not name:
            return "environment variable name must not be empty"
        if any(ord(ch) < 32 or ord(ch) > 126 or ch == "=" for ch in name):
            return "a valid environment variable name must consist only of printable ASCII characters other than '='"
        return None
    if not _STRICT_ENV.match(name):
        return ("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
                "and must not start with a digit")
    return None


RELAXED_ENV_NAME = "^[ -<>-~]+$"  # printable ASCII (0x20-0x7E) but '=' (0x3D), as a JSON-schema pattern


def env_name_pattern(version: tuple[int, int]) -> str:
    """The env-name rule in force as a JSON-schema pattern (the helm chart's values.schema.json)."""
    return RELAXED_ENV_NAME if applies("env-name-relaxed", version) else _STRICT_ENV.pattern


def job_name_pattern(version: tuple[int, int]) -> str:
    return (DNS1123_LABEL if applies("service-name-dns1123", version) else DNS1035_LABEL).pattern


def job_name_ok(name: str, version: tuple[int, int]) -> bool:
    """The job name names a headless Service: DNS-1035, or DNS-1123 where RelaxedServiceNameValidation is on."""
    if len(name) > 63:
        return False
    return bool(DNS1123_LABEL.match(name) if applies("service-name-dns1123", version) else DNS1035_LABEL.match(name))


def port_name_problem(port: str) -> str | None:
    """apimachinery IsValidPortName."""
    if not 1 <= len(port) <= 15:
        return "must be no more than 15 characters"
    if any(not (ch.isascii() and (ch.islower() or ch.isdigit() or ch == "-")) for ch in port):
        return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
    if "--" in port:
        return "must not contain consecutive hyphens"
    if not any(ch.isalpha() for ch in port):
        return "must contain at least one letter (a-z)"
    if port.startswith("-") or port.endswith("-"):
        return "must not begin or end with a hyphen"
    return None


# --- resources ------------------------------------------------------------------------------------

STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def is_extended(name: str) -> bool:
    """helper IsExtendedResourceName: domain-prefixed, not native (kubernetes.io), not requests.*."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return qualified_name_problem("requests." + name) is None


def container_resource_name_problem(name: str) -> str | None:
    """core validateContainerResourceName (with validateResourceName's IsQualifiedName first)."""
    problem = qualified_name_problem(name)
    if problem:
        return problem
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not is_hugepages(name):
            return "must be a standard resource for containers"
        if is_hugepages(name):
            from .kube import parse_quantity

            try:
                size = parse_quantity(name[len("hugepages-"):])
            except ValueError:
                return "must be a standard resource for containers"
            if size <= 0 or size != int(size):
                return "must be a standard resource for containers"
    elif "kubernetes.io/" not in name and not is_extended(name):
        return "doesn't follow extended resource name standard"
    return None


def resource_value_problem(name: str, value) -> str | None:
    """core ValidateResourceQuantityValue and validateResourceQuantityHugePageValue, for a parsed value."""
    if value < 0:
        return "must be greater than or equal to 0"
    if is_extended(name) and value != int(value):
        return "must be an integer"
    if is_hugepages(name):
        from .kube import parse_quantity

        page = parse_quantity(name[len("hugepages-"):])
        if page <= 0 or value % page != 0:
            return f"is not positive integer multiple of {name}"
    return None


_CPU_DIVISORS = ("1m", "1")
_MEMORY_DIVISORS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")


def divisor_problem(resource: str, divisor: str) -> str | None:
    """core validateContainerResourceDivisor (compared as quantities; 0 means unset)."""
    from .kube import parse_quantity

    value = parse_quantity(divisor)
    if value == 0:
        return None
    kind = resource.split(".", 1)[1]
    allowed = _CPU_DIVISORS if kind == "cpu" else _MEMORY_DIVISORS
    if any(value == parse_quantity(item) for item in allowed):
        return None
    listed = "1m and 1" if kind == "cpu" else ", ".join(allowed)  # the server's wording
    return f"only divisor's values {listed} are supported with the {kind} resource"


# --- quantities: what trainspec parses at all --------------------------------------------------------

_FACTORS = {"": 1.0, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
            "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}


def quantity_too_large(number: str, suffix: str) -> bool:
    """Whether a quantity (already size-checked: exponent within ±30) exceeds int64; floats suffice
    here, and keep `decimal` out of a plain compile's start-up."""
    factor = _FACTORS.get(suffix)
    if factor is None:  # an exponent
        factor = 10.0 ** int(suffix[1:])
    return float(number) * factor > QUANTITY_MAX


# --- paths ----------------------------------------------------------------------------------------

def backsteps_problem(path: str) -> str | None:
    """core validatePathNoBacksteps."""
    return "must not contain '..'" if ".." in path.split("/") else None


# --- job selector labels --------------------------------------------------------------------------

JOB_SELECTOR_LABELS = ("job-name", "controller-uid", "batch.kubernetes.io/job-name",
                       "batch.kubernetes.io/controller-uid")


# --- object size ----------------------------------------------------------------------------------

REQUEST_MAX_BYTES = 3 * 1024 * 1024  # kube-apiserver's request body limit (413 over it)
ETCD_OBJECT_MAX_BYTES = 1536 * 1024  # etcd's default --max-request-bytes: the largest object it stores
