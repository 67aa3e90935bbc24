"""Core pod validation on a written pod template: kubernetes pkg/apis/core/validation/validation.go.

Each check names the upstream function it ports (v1.36; a version bound says where 1.30..1.35
differ).  The helpers of names, resources and quantities are compiler/kube_rules.py's, shared with
the spec-level checks (one rule in one place).
"""

from __future__ import annotations

from ..kube_rules import subdomain_problem
from .containers import check_container, host_ports
from .findings import Sink
from .meta import metadata
from .scheduling import check_affinity, check_tolerations, check_topology_spread
from .security import check_pod_security_context
from .values import dns_label_problem, is_int, label_value_problem, qualified_name_problem
from .volumes import pod_volumes

RESTART_POLICIES = ("Always", "OnFailure", "Never")


DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


OS_NAMES = ("linux", "windows")


MAX_DNS_SEARCHES = 32  # validatePodDNSConfig MaxDNSSearchPaths


MAX_DNS_SEARCH_CHARS = 2048  # MaxDNSSearchListChars


MAX_NAMESERVERS = 3  # MaxDNSNameservers


def pod_template(s: Sink, template, path: tuple) -> None:
    """core ValidatePodTemplateSpec: the template's labels and annotations, then its pod spec."""
    if not isinstance(template, dict):
        s.required(path)
        return
    metadata(s, template.get("metadata") or {}, path + ("metadata",), namespaced=False)
    pod_spec(s, template.get("spec"), path + ("spec",))


def pod_spec(s: Sink, spec, path: tuple) -> None:
    """core ValidatePodSpec."""
    if not isinstance(spec, dict):
        s.required(path)
        return
    volumes = pod_volumes(s, spec.get("volumes") or [], path + ("volumes",))
    names: set[str] = set()
    init = spec.get("initContainers") or []
    containers = spec.get("containers") or []
    if not containers:
        s.required(path + ("containers",))
    grace = spec.get("terminationGracePeriodSeconds")
    for field, items in (("initContainers", init), ("containers", containers)):
        for i, container in enumerate(items if isinstance(items, list) else []):
            check_container(s, container, path + (field, i), volumes, names, spec, grace,
                            init=field == "initContainers")
    host_ports(s, [(field, i, c) for field, items in (("initContainers", init), ("containers", containers))
                    for i, c in enumerate(items) if isinstance(c, dict)], path)
    policy = spec.get("restartPolicy")
    if policy and policy not in RESTART_POLICIES:  # validateRestartPolicy ("": defaulted to Always)
        s.unsupported(path + ("restartPolicy",), policy, RESTART_POLICIES)
    dns = spec.get("dnsPolicy")
    if dns and dns not in DNS_POLICIES:  # "": defaulted to ClusterFirst  # validateDNSPolicy
        s.unsupported(path + ("dnsPolicy",), dns, DNS_POLICIES)
    _dns_config(s, spec.get("dnsConfig"), dns, path + ("dnsConfig",))
    for field in ("hostname", "subdomain"):  # ValidatePodSpec: ValidateDNS1123Label
        if spec.get(field):
            problem = dns_label_problem(spec[field])
            if problem:
                s.invalid(path + (field,), spec[field], problem)
    for field in ("priorityClassName", "serviceAccountName", "nodeName", "runtimeClassName", "serviceAccount"):
        # not schedulerName; runtimeClassName even empty (a pointer); serviceAccount is copied to serviceAccountName
        if spec.get(field) or field == "runtimeClassName" and spec.get(field) is not None:
            problem = subdomain_problem(spec[field])
            if problem:
                where = "serviceAccountName" if field == "serviceAccount" and not spec.get("serviceAccountName") \
                    else field
                s.invalid(path + (where,), spec[field], problem)
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not is_int(deadline) or not 1 <= deadline <= 2**31 - 1):  # ValidatePodSpec
        s.invalid(path + ("activeDeadlineSeconds",), deadline, "must be between 1 and 2147483647, inclusive")
    # a negative terminationGracePeriodSeconds is not refused: SetDefaults_PodSpec makes it 1
    for key in spec.get("nodeSelector") or {}:  # ValidatePodSpec -> metav1 ValidateLabels
        problem = qualified_name_problem(key) or label_value_problem(str(spec["nodeSelector"][key]))
        if problem:
            s.invalid(path + ("nodeSelector",), key, problem)
    check_topology_spread(s, spec.get("topologySpreadConstraints") or [], path + ("topologySpreadConstraints",))
    check_tolerations(s, spec.get("tolerations") or [], path + ("tolerations",))
    _host_aliases(s, spec.get("hostAliases") or [], path + ("hostAliases",))
    preemption = spec.get("preemptionPolicy")
    if preemption is not None and preemption not in ("PreemptLowerPriority", "Never"):  # validatePreemptionPolicy
        s.unsupported(path + ("preemptionPolicy",), preemption, ("Never", "PreemptLowerPriority"))
    host_process = [c for f in ("initContainers", "containers") for c in spec.get(f) or [] if isinstance(c, dict)
                    and ((c.get("securityContext") or {}).get("windowsOptions") or {}).get("hostProcess")] or \
        ((spec.get("securityContext") or {}).get("windowsOptions") or {}).get("hostProcess")
    if host_process and not spec.get("hostNetwork"):  # validateWindowsHostProcessPod
        s.invalid(path + ("hostNetwork",), bool(spec.get("hostNetwork")), "hostNetwork must be true if pod contains "
                  "any hostProcess containers")
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):  # validatePodSpecSecurityContext
        s.invalid(path + ("securityContext", "shareProcessNamespace"), True,
                  "ShareProcessNamespace and HostPID cannot both be enabled")
    _readiness_gates(s, spec.get("readinessGates") or [], path + ("readinessGates",))
    _scheduling_gates(s, spec.get("schedulingGates") or [], path + ("schedulingGates",))
    _os(s, spec, path)
    if isinstance(spec.get("resources"), dict) and "claims" in spec["resources"]:  # validatePodResources
        s.forbidden(path + ("resources", "claims"), "claims may not be set for Resources at pod-level")
    _image_pull_secrets(s, spec.get("imagePullSecrets") or [], path + ("imagePullSecrets",))
    check_pod_security_context(s, spec.get("securityContext"), path + ("securityContext",))
    check_affinity(s, spec.get("affinity"), path + ("affinity",))


def _host_aliases(s: Sink, items, path: tuple) -> None:
    """core ValidateHostAliases: an IP address; host names DNS subdomains."""
    import ipaddress

    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        try:
            ipaddress.ip_address(str(item.get("ip")))
        except ValueError:
            s.invalid(path + (i, "ip"), item.get("ip"), "must be a valid IP address")
        for j, name in enumerate(item.get("hostnames") or []):
            problem = subdomain_problem(str(name))
            if problem:
                s.invalid(path + (i, "hostnames", j), name, problem)


def _readiness_gates(s: Sink, gates, path: tuple) -> None:
    """core validateReadinessGates: conditionType a qualified name."""
    for i, gate in enumerate(gates if isinstance(gates, list) else []):
        value = (gate or {}).get("conditionType") if isinstance(gate, dict) else None
        problem = qualified_name_problem(str(value or ""))
        if problem:
            s.invalid(path + (i, "conditionType"), value, problem)


def _scheduling_gates(s: Sink, gates, path: tuple) -> None:
    """core validatePodSchedulingGates: names qualified names, unique."""
    seen: set[str] = set()
    for i, gate in enumerate(gates if isinstance(gates, list) else []):
        name = str((gate or {}).get("name") or "") if isinstance(gate, dict) else ""
        problem = qualified_name_problem(name)
        if problem:
            s.invalid(path + (i, "name"), name, problem)
        elif name in seen:
            s.duplicate(path + (i, "name"), name)
        seen.add(name)


def _os(s: Sink, spec: dict, path: tuple) -> None:
    """core validateOS / validateLinux / validateWindows: the name; a Linux pod sets no Windows options,
    a Windows pod none of Linux's."""
    os_ = spec.get("os")
    if not isinstance(os_, dict):
        return
    name = os_.get("name")
    if not name:
        s.required(path + ("os", "name"))
        return
    if name not in OS_NAMES:
        s.unsupported(path + ("os", "name"), name, OS_NAMES)
        return
    contexts = [(path + ("securityContext",), spec.get("securityContext") or {})]
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or []):
            if isinstance(c, dict):
                contexts.append((path + (field, i, "securityContext"), c.get("securityContext") or {}))
    for where, sc in contexts:
        if name == "linux" and sc.get("windowsOptions") is not None:
            s.forbidden(where + ("windowsOptions",), "windows options cannot be set for a linux pod")
        if name == "windows":
            for field in ("seLinuxOptions", "seccompProfile", "appArmorProfile", "capabilities",
                          "readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation", "procMount",
                          "runAsUser", "runAsGroup",
                          "fsGroup", "supplementalGroups", "sysctls", "fsGroupChangePolicy",
                          "supplementalGroupsPolicy", "seLinuxChangePolicy"):
                if sc.get(field) is not None:
                    s.forbidden(where + (field,), "cannot be set for a windows pod")


def _dns_config(s: Sink, config, policy, path: tuple) -> None:
    """core validatePodDNSConfig: nameservers (at most 3, IPs), searches (at most 32, 2048 characters, DNS
    subdomains), options named; dnsPolicy None needs a nameserver."""
    if not isinstance(config, dict):
        if policy == "None":
            s.required(path, "must provide `dnsConfig` when `dnsPolicy` is None")
        return
    servers = config.get("nameservers") or []
    if policy == "None" and not servers:
        s.required(path + ("nameservers",), "must provide at least one DNS nameserver when `dnsPolicy` is None")
    if len(servers) > MAX_NAMESERVERS:
        s.invalid(path + ("nameservers",), servers, f"must not have more than {MAX_NAMESERVERS} nameservers")
    import ipaddress

    for i, server in enumerate(servers):
        try:
            ipaddress.ip_address(str(server))
        except ValueError:
            s.invalid(path + ("nameservers", i), server, "must be a valid IP address")
    searches = config.get("searches") or []
    if len(searches) > MAX_DNS_SEARCHES:
        s.invalid(path + ("searches",), searches, f"must not have more than {MAX_DNS_SEARCHES} search paths")
    if len(" ".join(str(x) for x in searches)) > MAX_DNS_SEARCH_CHARS:
        s.invalid(path + ("searches",), searches, f"must not have more than {MAX_DNS_SEARCH_CHARS} characters "
                  "(including spaces) in the search list")
    for i, search in enumerate(searches):
        text = str(search)
        if text == ".":
            continue
        problem = subdomain_problem(text[:-1] if text.endswith(".") else text)
        if problem:
            s.invalid(path + ("searches", i), search, problem)
    for i, option in enumerate(config.get("options") or []):
        if isinstance(option, dict) and not option.get("name"):
            s.required(path + ("options", i), "Option.Name must not be empty")


def _image_pull_secrets(s: Sink, items, path: tuple) -> None:
    """core validateImagePullSecrets: nothing but the reference's own fields (an empty name is taken: it names
    no Secret, and the kubelet skips it)."""
    del s, items, path
