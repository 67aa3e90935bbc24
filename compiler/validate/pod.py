"""Spec v1.1 validation: pod and container settings, resources beside the shorthand, role
volumes, downward-API env, sidecars, pytorch.elastic, patches, and what the API server would
reject in a pod (duplicate volume names and mount paths, generated ones included)."""

from __future__ import annotations

from .. import fields as F
from ..kube import (
    CONFIG_KEY,
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    QUANTITY,
    parse_quantity,
    quantity_size_problem,
)
from ..kube_rules import (
    JOB_SELECTOR_LABELS,
    KEY_EXPECTED,
    VALUE_EXPECTED,
    container_resource_name_problem,
    divisor_problem,
    label_value_problem,
    qualified_name_problem,
    resource_value_problem,
    subdomain_problem,
)
from ..model import ConfigMapRef, FieldRef, PodSettings, ResourceFieldRef, SecretRef, Volume
from ..reader import Reader, type_name

JOB_ONLY_FIELDS = ("imagePullSecrets", "patches")  # a role that writes them is told to move them
ROLE_ONLY_FIELDS = ("priorityClassName",)  # likewise a job's spec (it has scheduling.priorityClassName)
ENV_REFS = F.MAPPINGS["envRef"].exactly_one
# The downward API's env fields (k8s.io/kubernetes pkg/apis/core/validation validEnvDownwardAPIFieldPathExpressions).
FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
               "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
RESOURCE_FIELDS = F.DOWNWARD_RESOURCES
SHM_MOUNT = ("dshm", "/dev/shm")
SSH_VOLUME = "ssh-auth"
HOSTFILE_MOUNT = ("mpi-job-config", "/etc/mpi")


def pod_settings(v, body: dict, path: tuple, role: bool) -> PodSettings:
    """The pod and container settings written at `path` (a job's spec or a role)."""
    r: Reader = v.r
    found: dict = {}
    if body.get("imagePullPolicy") is not None:
        found["image_pull_policy"] = r.choice(body["imagePullPolicy"], path + ("imagePullPolicy",),
                                              F.SPEC.enum("imagePullPolicy"))
    for key, attr in (("serviceAccountName", "service_account_name"), ("priorityClassName", "priority_class_name")):
        if body.get(key) is not None and (role or key != "priorityClassName"):
            text = r.string(body[key], path + (key,))
            if text is not None and (len(text) > 253 or not DNS1123_SUBDOMAIN.match(text)):
                r.error(path + (key,), f"{text!r} is not a valid name", "a DNS-1123 subdomain")
                text = None
            found[attr] = text
    if body.get("nodeSelector") is not None:
        found["node_selector"] = label_map(r, body["nodeSelector"], path + ("nodeSelector",), "label", False)
    if body.get("podLabels") is not None:
        found["pod_labels"] = label_map(r, body["podLabels"], path + ("podLabels",), "label", True)
    if body.get("podAnnotations") is not None:
        found["pod_annotations"] = label_map(r, body["podAnnotations"], path + ("podAnnotations",), "annotation",
                                             True)
    if body.get("tolerations") is not None:
        from ..kube_shapes import check_list  # here: most specs write no Kubernetes-shaped value (start-up)

        found["tolerations"] = check_list(r, body["tolerations"], path + ("tolerations",), "Toleration")
    for key, attr, shape in (("affinity", "affinity", "Affinity"),
                             ("securityContext", "security_context", "SecurityContext"),
                             ("podSecurityContext", "pod_security_context", "PodSecurityContext")):
        if body.get(key) is not None:
            from ..kube_shapes import check

            found[attr] = check(r, body[key], path + (key,), shape)
    if not role and "priorityClassName" in body:
        r.error(path + ("priorityClassName",), "priorityClassName is a role field", "scheduling.priorityClassName",
                "for every pod write spec.scheduling.priorityClassName; a role's own overrides it", at_key=True)
    if role:
        for key in JOB_ONLY_FIELDS:
            if key in body:
                r.error(path + (key,), f"{key} is a job-level field", f"spec.{key}",
                        f"move it to spec.{key}", at_key=True)
    return PodSettings(**{k: val for k, val in found.items() if val is not None})


def label_map(r: Reader, value, path: tuple, kind: str, reserved: bool) -> dict | None:
    """label/annotation-shaped map: valid keys, and for labels valid values; `reserved`: trainspec's keys refused."""
    mapping = r.mapping(value, path, tuple(value) if isinstance(value, dict) else (), what="strings")
    if mapping is None:
        return None
    out = {}
    for key, item in mapping.items():
        problem = qualified_name_problem(key)
        if problem:
            r.error(path + (key,), f"key {key!r} is not a valid {kind} key: {problem}", KEY_EXPECTED, at_key=True)
            continue
        if reserved and key.startswith(("trainspec.dev/", "app.kubernetes.io/")):
            r.error(path + (key,), f"key {key!r} is set by trainspec", "a key of your own", "choose another prefix",
                    at_key=True)
            continue
        if reserved and kind == "label" and key in JOB_SELECTOR_LABELS:
            r.error(path + (key,), f"label {key!r} is the Job controller's own", "a key of your own",
                    "Kubernetes sets it on every Job's pods and selects them by it: a value of yours would break "
                    "the Job's selector (`selector` does not match template `labels`)", at_key=True)
            continue
        text = r.string(item, path + (key,), non_empty=False)
        if text is None:
            continue
        problem = label_value_problem(text) if kind == "label" else None
        if problem:
            r.error(path + (key,), f"{text!r} is not a valid label value: {problem}", VALUE_EXPECTED)
            continue
        out[key] = text
    return out


def pull_secrets(r: Reader, value, path: tuple) -> tuple[str, ...]:
    if not isinstance(value, list):
        r.error(path, f"is {type_name(value)}", "a list of Secret names", "e.g. imagePullSecrets: [regcred]")
        return ()
    out: list[str] = []
    for i, item in enumerate(value):
        if isinstance(item, dict) and set(item) == {"name"}:
            r.error(path + (i,), "is a mapping", "a Secret name", f"write just the name: {item['name']}")
            continue
        name = r.string(item, path + (i,))
        if name is None:
            continue
        if len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
            r.error(path + (i,), f"{name!r} is not a valid Secret name", "a DNS-1123 subdomain")
        elif name in out:
            r.error(path + (i,), f"Secret {name!r} is listed twice", "each Secret once")
        else:
            out.append(name)
    return tuple(out)


def resource_maps(v, body: dict, path: tuple, cpu, memory, gpu: int, accelerator_names: tuple[str, ...]):
    """resources.requests / resources.limits: (requests, limits) as (name, quantity) pairs."""
    r: Reader = v.r
    maps: dict[str, dict[str, str]] = {}
    for key in ("requests", "limits"):
        maps[key] = {}
        if body.get(key) is None:
            continue
        kp = path + (key,)
        mapping = r.mapping(body[key], kp, tuple(body[key]) if isinstance(body[key], dict) else (),
                            what="resource name: quantity")
        for name, item in (mapping or {}).items():
            problem = container_resource_name_problem(name)
            if problem:
                r.error(kp + (name,), f"{name!r} is not a container resource name: {problem}",
                        "cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource such as "
                        "example.com/device", "gpu is resources.gpu (spec.accelerator names the resource)"
                        if name in ("gpu", "/gpu") else "", at_key=True)
                continue
            shorthand = {"cpu": cpu, "memory": memory}.get(name)
            if shorthand is not None or (gpu and name in accelerator_names):
                short = "gpu" if name in accelerator_names else name
                r.error(kp + (name,), f"{name} is set twice: resources.{short} and resources.{key}.{name}",
                        "one of them", f"resources.{short} sets both requests and limits; remove one",
                        at_key=True)
                continue
            quantity = v.quantity(item, kp + (name,), '"500m", "8Gi" or 1')
            if quantity is not None:
                problem = resource_value_problem(name, parse_quantity(quantity))
                if problem:
                    r.error(kp + (name,), f"{name}: {quantity} {problem}", "a whole number" if problem.endswith(
                        "integer") else "a multiple of the page size", "extended resources are counted, not "
                        "divided" if problem.endswith("integer") else "")
                    continue
                maps[key][name] = quantity
    names = set(maps["requests"]) | set(maps["limits"])
    if any(name.startswith("hugepages-") for name in names) and not (cpu or memory or names & {"cpu", "memory"}):
        r.error(path, "HugePages require cpu or memory", "a cpu or memory request or limit beside the hugepages",
                "e.g. resources.memory: 1Gi")
    for name, request in maps["requests"].items():
        limit = maps["limits"].get(name)
        # on a Trainer runtime (v1.3) resourcesPerNode is merged into the runtime's resources, which may hold the limit
        unlimited = limit is None and not v.on_runtime
        if _fixed(name) and (unlimited or limit is not None and parse_quantity(request) != parse_quantity(limit)):
            # the API server: extended resources and hugepages cannot be overcommitted
            r.error(path + ("requests", name), f"{name} cannot be overcommitted: its request needs an equal limit",
                    f"limits.{name}: {request}", "or set only limits (the request defaults to it)")
        elif limit is not None and parse_quantity(request) > parse_quantity(limit):
            r.error(path + ("requests", name), f"request {request} is more than the limit {limit}",
                    f"requests.{name} <= limits.{name}")
    return tuple(maps["requests"].items()), tuple(maps["limits"].items())


def _fixed(name: str) -> bool:
    """Resources the API server will not overcommit: extended resources (a domain other than
    kubernetes.io) and hugepages."""
    return name.startswith("hugepages-") or ("/" in name and not name.split("/", 1)[0].endswith("kubernetes.io"))


def env_ref(r: Reader, item: dict, path: tuple):
    """An env value written as a reference: a Secret or ConfigMap key, or the downward API."""
    body = r.mapping(item, path, F.MAPPINGS["envRef"].names)
    if body is None:
        return None
    known = [key for key in body if key in ENV_REFS]
    if len(body) != 1 or len(known) != 1:
        if len(known) != len(body):
            return None  # the unknown key is reported; "missing" errors would only mislead
        r.error(path, f"has {len(body)} references", "exactly one of " + ", ".join(ENV_REFS))
        return None
    kind = known[0]
    kp = path + (kind,)
    if kind == "fieldRef":
        ref = r.mapping(body[kind], kp, F.MAPPINGS["fieldRef"].names, required=F.MAPPINGS["fieldRef"].required)
        if not ref or ref.get("fieldPath") is None:
            return None
        field_path = r.string(ref["fieldPath"], kp + ("fieldPath",))
        if field_path is None:
            return None
        if ref.get("apiVersion") not in (None, "v1"):
            r.error(kp + ("apiVersion",), f"{ref['apiVersion']!r} is not allowed", "v1")
            return None
        if field_path not in FIELD_PATHS and not _label_field(field_path):
            written = _label_key(field_path)
            why = f": the key {written!r}: {qualified_name_problem(written)}" if written is not None else ""
            r.error(kp + ("fieldPath",), f"{field_path!r} is not a downward API field{why}",
                    "one of " + ", ".join(FIELD_PATHS) + ", metadata.labels['<key>'], metadata.annotations['<key>']")
            return None
        return FieldRef(field_path)
    if kind == "resourceFieldRef":
        ref = r.mapping(body[kind], kp, F.MAPPINGS["resourceFieldRef"].names,
                        required=F.MAPPINGS["resourceFieldRef"].required)
        if not ref or ref.get("resource") is None:
            return None
        resource = r.choice(ref["resource"], kp + ("resource",), RESOURCE_FIELDS)
        container = r.string(ref["containerName"], kp + ("containerName",)) if ref.get("containerName") else None
        divisor = None
        if ref.get("divisor") is not None:
            divisor = str(ref["divisor"]).strip()
            if not QUANTITY.match(divisor) or quantity_size_problem(divisor):
                r.error(kp + ("divisor",), f"{ref['divisor']!r} is not a Kubernetes quantity", 'e.g. "1m" or 1Mi')
                return None
            problem = divisor_problem(resource, divisor) if resource else None
            if problem and resource:
                r.error(kp + ("divisor",), f"divisor {divisor}: {problem}", "1m or 1" if resource.endswith("cpu")
                        else "1, 1k, 1M, 1G ... or 1Ki, 1Mi, 1Gi ...")
                return None
        return ResourceFieldRef(resource, container, divisor) if resource else None
    ref = r.mapping(body[kind], kp, F.MAPPINGS["keyRef"].names, required=F.MAPPINGS["keyRef"].required)
    if not ref or ref.get("name") is None or ref.get("key") is None:
        return None
    name = r.string(ref["name"], kp + ("name",))
    key = r.string(ref["key"], kp + ("key",))
    if name is None or key is None:
        return None
    if len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        r.error(kp + ("name",), f"{name!r} is not a valid {kind[:-6]} name: {subdomain_problem(name)}",
                "a DNS-1123 subdomain of at most 253 characters")
        return None
    if len(key) > 253 or not CONFIG_KEY.match(key) or key in (".", ".."):
        r.error(kp + ("key",), f"{key!r} is not a valid {kind[:-6]} key",
                "letters, digits, '-', '_' or '.', at most 253 characters")
        return None
    return SecretRef(name, key) if kind == "secretKeyRef" else ConfigMapRef(name, key)


def _label_key(path: str) -> str | None:
    for prefix in ("metadata.labels['", "metadata.annotations['"):
        if path.startswith(prefix) and path.endswith("']"):
            return path[len(prefix):-2]
    return None


def _label_field(path: str) -> bool:
    for prefix in ("metadata.labels['", "metadata.annotations['"):
        if path.startswith(prefix) and path.endswith("']"):
            return not qualified_name_problem(path[len(prefix):-2])
    return False


def pod_conflicts(r: Reader, framework: str, job_volumes: tuple[Volume, ...], role_name: str,
                  role_volumes: tuple[Volume, ...], shm: bool, ssh_path: str) -> None:
    """Duplicate volume names or mount paths in one pod: what the API server rejects."""
    generated: list[tuple[str, str, str]] = []  # (name, mount, why)
    if shm:
        generated.append(SHM_MOUNT + ("resources.shm",))
    if framework == "mpi":
        generated.append((SSH_VOLUME, ssh_path, "the MPI ssh keys (mpi.sshAuthMountPath)"))
        if role_name == "launcher":
            generated.append(HOSTFILE_MOUNT + ("the MPI hostfile",))
    names: dict[str, str] = {}
    mounts: dict[str, str] = {}
    for name, mount, why in generated:
        if mount in mounts:  # the API server: mountPath "must be unique" (core ValidateVolumeMounts)
            r.error(("spec", "mpi", "sshAuthMountPath"), f"{mount!r} is also where {mounts[mount]} is mounted in the "
                    f"{role_name} pod", "a path of its own", "the default is /root/.ssh")
        names.setdefault(name, why)
        mounts.setdefault(mount, why)
    for base, volumes in ((("spec", "volumes"), job_volumes), (("spec", "roles", role_name, "volumes"), role_volumes)):
        added = []
        for i, vol in enumerate(volumes):
            for key, value, seen in (("name", vol.name, names), ("mountPath", vol.mount_path, mounts)):
                if value in seen:
                    what = "volume name" if key == "name" else "mount path"
                    r.error(base + (i, key), f"{what} {value!r} is also used by {seen[value]} in the "
                            f"{role_name} pod", f"a unique {what}",
                            "rename this volume" if key == "name" else "mount it elsewhere")
            added.append((vol.name, vol.mount_path, f"{'.'.join(base)}[{i}]"))
        # duplicates inside one list are reported where the list is read
        for name, mount, why in added:
            names.setdefault(name, why)
            mounts.setdefault(mount, why)


def is_label(name: str) -> bool:
    return bool(DNS1123_LABEL.match(name)) and len(name) <= 63
