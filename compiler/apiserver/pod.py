"""Core pod validation on a written pod template: kubernetes pkg/apis/core/validation/validation.go.

Each check names the upstream function it ports (v1.36; a version bound says where 1.30..1.35
differ).  The helpers of names, resources and quantities are compiler/kube_rules.py's, shared with
the spec-level checks (one rule in one place).
"""

from __future__ import annotations

import re
from typing import TypeGuard

from ..kube import parse_quantity, quantity_size_problem
from ..kube_rules import (
    backsteps_problem,
    container_resource_name_problem,
    dns_label_problem,
    env_name_problem,
    is_hugepages,
    label_value_problem,
    port_name_problem,
    qualified_name_problem,
    resource_value_problem,
    subdomain_problem,
)
from .findings import Sink
from .meta import cached, metadata

# the same label keys, values and env names recur on every object of a job: each checked once
qualified_name_problem = cached(qualified_name_problem)
label_value_problem = cached(label_value_problem)
env_name_problem = cached(env_name_problem)
dns_label_problem = cached(dns_label_problem)

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PROTOCOLS = ("SCTP", "TCP", "UDP")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
RECURSIVE_READ_ONLY = ("Disabled", "IfPossible", "Enabled")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES = ("Honor", "Ignore")
OS_NAMES = ("linux", "windows")
SCHEMES = ("HTTP", "HTTPS")
FIELD_REFS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
              "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
MAX_DNS_SEARCHES = 32  # validatePodDNSConfig MaxDNSSearchPaths
MAX_DNS_SEARCH_CHARS = 2048  # MaxDNSSearchListChars
MAX_NAMESERVERS = 3  # MaxDNSNameservers
MAX_MODE = 0o777  # validateKeyToPath / validateSecretVolumeSource: "must be a number between 0 and 0777"
VOLUME_SOURCES = ("hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
                  "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
                  "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
                  "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
                  "image")


def _v(s: Sink, low: tuple[int, int]) -> bool:
    """Whether the Kubernetes version checked is `low` or later (a feature gate on by default there)."""
    return s.version >= low


def _int(value) -> TypeGuard[int]:
    """An integer as JSON has it (a bool is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


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
    volumes = _volumes(s, spec.get("volumes") or [], path + ("volumes",))
    names: set[str] = set()
    init = spec.get("initContainers") or []
    containers = spec.get("containers") or []
    if not containers:
        s.required(path + ("containers",))
    grace = spec.get("terminationGracePeriodSeconds")
    for field, items in (("initContainers", init), ("containers", containers)):
        for i, container in enumerate(items if isinstance(items, list) else []):
            _container(s, container, path + (field, i), volumes, names, spec, grace, init=field == "initContainers")
    _host_ports(s, [(field, i, c) for field, items in (("initContainers", init), ("containers", containers))
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
    if deadline is not None and (not _int(deadline) or not 1 <= deadline <= 2**31 - 1):  # ValidatePodSpec
        s.invalid(path + ("activeDeadlineSeconds",), deadline, "must be between 1 and 2147483647, inclusive")
    # a negative terminationGracePeriodSeconds is not refused: SetDefaults_PodSpec makes it 1
    for key in spec.get("nodeSelector") or {}:  # ValidatePodSpec -> metav1 ValidateLabels
        problem = qualified_name_problem(key) or label_value_problem(str(spec["nodeSelector"][key]))
        if problem:
            s.invalid(path + ("nodeSelector",), key, problem)
    _topology_spread(s, spec.get("topologySpreadConstraints") or [], path + ("topologySpreadConstraints",))
    _tolerations(s, spec.get("tolerations") or [], path + ("tolerations",))
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
    _pod_security_context(s, spec.get("securityContext"), path + ("securityContext",))
    _affinity(s, spec.get("affinity"), path + ("affinity",))


# --- volumes --------------------------------------------------------------------------------------

def _volumes(s: Sink, volumes, path: tuple) -> dict[str, dict]:
    """core ValidateVolumes: names DNS-1123 labels, unique, one source each; validateVolumeSource."""
    out: dict[str, dict] = {}
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        vp = path + (i,)
        if not isinstance(volume, dict):
            continue
        name = volume.get("name")
        if not name:
            s.required(vp + ("name",))
        else:
            problem = dns_label_problem(name)
            if problem:
                s.invalid(vp + ("name",), name, problem)
            elif name in out:
                s.duplicate(vp + ("name",), name)
            out[name] = volume
        sources = [key for key in VOLUME_SOURCES if volume.get(key) is not None]
        # no source (or only null ones): SetDefaults_Volume makes it an emptyDir before validation, so the
        # server's "must specify a volume type" is never reached on create (measured on v1.36.2)
        if len(sources) > 1:
            s.forbidden(vp + (sources[1],), "may not specify more than 1 volume type")
        if isinstance(volume.get("hostPath"), dict):
            host = volume["hostPath"].get("path")
            if not host:
                s.required(vp + ("hostPath", "path"))
            elif backsteps_problem(host):  # validateHostPathVolumeSource -> validatePathNoBacksteps
                s.invalid(vp + ("hostPath", "path"), host, "must not contain '..'")
        for kind, ref in (("secret", "secretName"), ("configMap", "name")):
            source = volume.get(kind)
            if isinstance(source, dict):  # validateSecretVolumeSource / validateConfigMapVolumeSource
                ref_name = source.get(ref)
                if kind == "secret" and not ref_name:
                    s.required(vp + (kind, ref))
                elif not ref_name and kind == "configMap":
                    s.required(vp + (kind, ref))
                mode = source.get("defaultMode")
                if mode is not None and (not _int(mode) or not 0 <= mode <= MAX_MODE):
                    s.invalid(vp + (kind, "defaultMode"), mode, "must be a number between 0 and 0777 (octal), both "
                              "inclusive")
                for j, item in enumerate(source.get("items") or []):
                    _key_to_path(s, item, vp + (kind, "items", j))
        downward = volume.get("downwardAPI")
        if isinstance(downward, dict):  # validateDownwardAPIVolumeSource
            for item in downward.get("items") or []:
                _downward_file(s, item, vp + ("downwardAPI",))
        csi = volume.get("csi")
        if isinstance(csi, dict) and not csi.get("driver"):  # validateCSIVolumeSource
            s.required(vp + ("csi", "driver"))
        empty = volume.get("emptyDir")
        if isinstance(empty, dict) and empty.get("sizeLimit") is not None:
            _quantity(s, vp + ("emptyDir", "sizeLimit"), empty["sizeLimit"], "sizeLimit")
    return out


VOLUME_FIELD_REFS = ("metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels",
                     "metadata.annotations")  # validVolumeDownwardAPIFieldPathExpressions


def _downward_file(s: Sink, item, path: tuple) -> None:
    """core validateDownwardAPIVolumeFile: a relative path, one of fieldRef (a pod metadata field) and
    resourceFieldRef.  Its errors are at the volume source's path, not the item's, as upstream reports them."""
    if not isinstance(item, dict):
        return
    _local_path(s, item.get("path"), path + ("path",), required=True)
    field, resource = item.get("fieldRef"), item.get("resourceFieldRef")
    if isinstance(field, dict):  # validateObjectFieldSelector
        value = str(field.get("fieldPath") or "")
        base = value.split("[", 1)[0]
        if not value:
            s.required(path + ("fieldRef", "fieldPath"))
        elif base not in VOLUME_FIELD_REFS or "[" in value and base not in ("metadata.labels", "metadata.annotations"):
            s.unsupported(path + ("fieldRef", "fieldPath"), value, VOLUME_FIELD_REFS)
        if resource is not None:
            s.invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously")
    elif resource is None:
        s.required(path, "one of fieldRef and resourceFieldRef is required")
    mode = item.get("mode")
    if mode is not None and (not _int(mode) or not 0 <= mode <= MAX_MODE):
        s.invalid(path + ("mode",), mode, "must be a number between 0 and 0777 (octal), both inclusive")


def _key_to_path(s: Sink, item, path: tuple) -> None:
    """core validateKeyToPath: key required; path relative, no '..' element; mode 0-0777."""
    if not isinstance(item, dict):
        return
    if not item.get("key"):
        s.required(path + ("key",))
    _local_path(s, item.get("path"), path + ("path",), required=True)
    mode = item.get("mode")
    if mode is not None and (not _int(mode) or not 0 <= mode <= MAX_MODE):
        s.invalid(path + ("mode",), mode, "must be a number between 0 and 0777 (octal), both inclusive")


def _local_path(s: Sink, value, path: tuple, required: bool = False) -> None:
    """core validateLocalNonReservedPath / validateLocalDescendingPath: relative, no '..' element."""
    if not value:
        if required:
            s.required(path)
        return
    if value.startswith("/"):
        s.invalid(path, value, "must be a relative path")
    parts = value.replace("\\", "/").split("/")
    if ".." in parts:
        s.invalid(path, value, "must not contain '..'")
    if required and value.startswith(".."):  # validateLocalNonReservedPath
        s.invalid(path, value, "must not start with '..'")


# --- containers -----------------------------------------------------------------------------------

def _container(s: Sink, c, path: tuple, volumes: dict, names: set, spec: dict, grace, init: bool) -> None:
    """core validateContainers / validateInitContainers -> validateContainerCommon."""
    if not isinstance(c, dict):
        return
    name = c.get("name")
    if not name:
        s.required(path + ("name",))
    else:
        problem = dns_label_problem(name)
        if problem:
            s.invalid(path + ("name",), name, problem)
        elif name in names:
            s.duplicate(path + ("name",), name)
        names.add(name)
    if not c.get("image"):
        s.required(path + ("image",))
    # an empty enum is unset: SetDefaults_Container / SetDefaults_ContainerPort fill it before validation
    policy = c.get("imagePullPolicy")
    if policy and policy not in PULL_POLICIES:  # validatePullPolicy
        s.unsupported(path + ("imagePullPolicy",), policy, PULL_POLICIES)
    message = c.get("terminationMessagePolicy")
    if message and message not in MESSAGE_POLICIES:  # validateContainerCommon
        s.unsupported(path + ("terminationMessagePolicy",), message, MESSAGE_POLICIES)
    _ports(s, c.get("ports") or [], path + ("ports",), spec)
    _env(s, c.get("env") or [], path + ("env",))
    _env_from(s, c.get("envFrom") or [], path + ("envFrom",))
    _mounts(s, c.get("volumeMounts") or [], path + ("volumeMounts",), volumes, c)
    _resources(s, c.get("resources"), path + ("resources",))
    _security_context(s, c.get("securityContext"), path + ("securityContext",))
    restart = c.get("restartPolicy")
    sidecar = init and restart == "Always"
    if restart is not None and (not init or restart != "Always"):  # validateContainerRestartPolicy (1.30)
        s.unsupported(path + ("restartPolicy",), restart, ("Always",) if init else ())
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if c.get(probe) is not None:
            if init and not sidecar:
                s.forbidden(path + (probe,), "may not be set for init containers without restartPolicy=Always")
                continue
            _probe(s, c[probe], path + (probe,), probe, grace)
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        if init and not sidecar and set(lifecycle) != {"stopSignal"}:  # (recorded: a stopSignal alone is taken)
            s.forbidden(path + ("lifecycle",), "may not be set for init containers without restartPolicy=Always")
        for hook in ("postStart", "preStop"):
            if lifecycle.get(hook) is not None:
                _handler(s, lifecycle[hook], path + ("lifecycle", hook), grace, lifecycle=True)
        signal = lifecycle.get("stopSignal")
        if signal is not None and not _v(s, (1, 33)):
            s.forbidden(path + ("lifecycle", "stopSignal"), "may not be set")


def _ports(s: Sink, ports, path: tuple, spec: dict) -> None:
    """core validateContainerPorts."""
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        pp = path + (i,)
        if not isinstance(port, dict):
            continue
        name = port.get("name")
        if name:
            problem = port_name_problem(name)
            if problem:
                s.invalid(pp + ("name",), name, problem)
            elif name in names:
                s.duplicate(pp + ("name",), name)
            names.add(name)
        number = port.get("containerPort")
        if number is None or number == 0:
            s.required(pp + ("containerPort",))
        elif not _int(number) or not 1 <= number <= 65535:
            s.invalid(pp + ("containerPort",), number, "must be between 1 and 65535, inclusive")
        host = port.get("hostPort")
        if host not in (None, 0) and (not _int(host) or not 1 <= host <= 65535):
            s.invalid(pp + ("hostPort",), host, "must be between 1 and 65535, inclusive")
        protocol = port.get("protocol")
        if protocol and protocol not in PROTOCOLS:  # "" and unset: defaulted to TCP
            s.unsupported(pp + ("protocol",), protocol, PROTOCOLS)
        if spec.get("hostNetwork") and host not in (None, 0) and host != number:  # validateHostNetwork
            s.invalid(pp + ("hostPort",), host, "must match `containerPort` when `hostNetwork` is true")


def _host_ports(s: Sink, containers: list[tuple[str, int, dict]], path: tuple) -> None:
    """core checkHostPortConflicts -> AccumulateUniqueHostPorts: one (hostIP, hostPort, protocol) per pod."""
    seen: set[str] = set()
    for field, i, c in containers:
        for j, port in enumerate(c.get("ports") or []):
            if not isinstance(port, dict) or not port.get("hostPort"):
                continue
            key = f"{port.get('hostIP', '')}/{port.get('hostPort')}/{port.get('protocol', '')}"
            if key in seen:
                s.duplicate(path + (field, i, "ports", j, "hostPort"), key)
            seen.add(key)


def _env(s: Sink, env, path: tuple) -> None:
    """core ValidateEnv: names (validateEnvVarName, per version), value or one valueFrom source."""
    for i, var in enumerate(env if isinstance(env, list) else []):
        vp = path + (i,)
        if not isinstance(var, dict):
            continue
        name = var.get("name")
        if not name:
            s.required(vp + ("name",))
        else:
            problem = env_name_problem(name, s.version)
            if problem:
                s.invalid(vp + ("name",), name, problem)
        source = var.get("valueFrom")
        if source is not None:
            if var.get("value"):
                s.invalid(vp + ("valueFrom",), "", "may not be specified when `value` is not empty")
            _env_source(s, source, vp + ("valueFrom",))


def _env_source(s: Sink, source, path: tuple) -> None:
    """core validateEnvVarValueFrom: exactly one of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef."""
    if not isinstance(source, dict):
        return
    kinds = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
             if source.get(k) is not None]
    if not kinds:
        s.invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                  "`secretKeyRef`")
    elif len(kinds) > 1:
        s.invalid(path, "", "may not have more than one field specified at a time")
    field = source.get("fieldRef")
    if isinstance(field, dict):  # validateObjectFieldSelector / validateEnvVarValueFrom's valid field paths
        value = str(field.get("fieldPath") or "")
        base = value.split("[", 1)[0]
        if not value:
            s.required(path + ("fieldRef", "fieldPath"))
        elif base in ("metadata.labels", "metadata.annotations"):
            key = value[len(base):].strip("[]'\"")
            problem = qualified_name_problem(key) if key else "a subscript is required"
            if problem:
                s.invalid(path + ("fieldRef", "fieldPath"), value, problem)
        elif value not in FIELD_REFS:
            s.unsupported(path + ("fieldRef", "fieldPath"), value, FIELD_REFS + ("metadata.annotations",
                                                                                  "metadata.labels"))
    for kind in ("configMapKeyRef", "secretKeyRef"):  # validateConfigMapKeySelector / validateSecretKeySelector
        ref = source.get(kind)
        if isinstance(ref, dict):
            if not ref.get("key"):
                s.required(path + (kind, "key"))
            if ref.get("name"):
                problem = subdomain_problem(ref["name"])
                if problem:
                    s.invalid(path + (kind, "name"), ref["name"], problem)
            else:
                s.required(path + (kind, "name"))


def _env_from(s: Sink, items, path: tuple) -> None:
    """core ValidateEnvFrom: one of configMapRef, secretRef; a prefix is an env name (1.30-1.31 strict)."""
    for i, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        refs = [k for k in ("configMapRef", "secretRef") if item.get(k) is not None]
        if len(refs) != 1:
            s.invalid(path + (i,), "", "must specify one of: `configMapRef` or `secretRef`")
        for ref in refs:  # validateConfigMapEnvSource / validateSecretEnvSource
            name = item[ref].get("name") if isinstance(item[ref], dict) else None
            if not name:
                s.required(path + (i, ref, "name"))
            elif subdomain_problem(str(name)):
                s.invalid(path + (i, ref, "name"), name, subdomain_problem(str(name)) or "")
        prefix = item.get("prefix")
        if prefix:
            problem = env_name_problem(prefix, s.version)
            if problem:
                s.invalid(path + (i, "prefix"), prefix, problem)


def _mounts(s: Sink, mounts, path: tuple, volumes: dict, container: dict) -> None:
    """core ValidateVolumeMounts: the volume exists; mountPath required and unique; subPath / subPathExpr
    local descending paths, not both; mountPropagation; recursiveReadOnly (1.30 alpha, 1.31 beta, 1.33 GA)."""
    paths: set[str] = set()
    privileged = bool((container.get("securityContext") or {}).get("privileged"))
    for i, mount in enumerate(mounts if isinstance(mounts, list) else []):
        mp = path + (i,)
        if not isinstance(mount, dict):
            continue
        name = mount.get("name")
        if not name:
            s.required(mp + ("name",))
        elif name not in volumes:
            s.not_found(mp + ("name",), name)
        target = mount.get("mountPath")
        if not target:
            s.required(mp + ("mountPath",))
        elif target in paths:
            s.invalid(mp + ("mountPath",), target, "must be unique")
        else:
            paths.add(target)
        sub, expr = mount.get("subPath"), mount.get("subPathExpr")
        if sub and expr:
            s.invalid(mp + ("subPathExpr",), expr, "subPathExpr and subPath are mutually exclusive")
        if sub:
            _local_path(s, sub, mp + ("subPath",))
        if expr:
            _local_path(s, expr, mp + ("subPathExpr",))
        propagation = mount.get("mountPropagation")
        if propagation is not None:  # validateMountPropagation
            if propagation not in PROPAGATIONS:
                s.unsupported(mp + ("mountPropagation",), propagation, PROPAGATIONS)
            elif propagation == "Bidirectional" and not privileged:
                s.forbidden(mp + ("mountPropagation",), "Bidirectional mount propagation is available only to "
                            "privileged containers")
        recursive = mount.get("recursiveReadOnly")
        if recursive is not None:  # validateMountRecursiveReadOnly
            if recursive not in RECURSIVE_READ_ONLY:
                s.unsupported(mp + ("recursiveReadOnly",), recursive, RECURSIVE_READ_ONLY)
            elif recursive != "Disabled":
                if not mount.get("readOnly"):
                    s.forbidden(mp + ("recursiveReadOnly",), "may only be specified when readOnly is true")
                if recursive == "Enabled" and propagation not in (None, "None"):
                    s.forbidden(mp + ("recursiveReadOnly",), "may only be specified when mountPropagation is None "
                                "or not specified")


# --- probes and hooks -----------------------------------------------------------------------------

def _probe(s: Sink, probe, path: tuple, kind: str, grace) -> None:
    """core validateProbe (and validateLivenessProbe / validateStartupProbe: successThreshold 1)."""
    if not isinstance(probe, dict):
        return
    _handler(s, probe, path, grace, lifecycle=False)
    for field in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        value = probe.get(field)
        if value is not None and _int(value) and value < 0:
            s.invalid(path + (field,), value, "must be greater than or equal to 0")
    if kind != "readinessProbe" and probe.get("successThreshold") not in (None, 0, 1):
        s.invalid(path + ("successThreshold",), probe["successThreshold"], "must be 1")
    term = probe.get("terminationGracePeriodSeconds")
    if term is not None:
        if kind == "readinessProbe":
            s.invalid(path + ("terminationGracePeriodSeconds",), term, "must not be set for readinessProbes")
        elif _int(term) and term <= 0:
            s.invalid(path + ("terminationGracePeriodSeconds",), term, "must be greater than 0")


def _handler(s: Sink, handler: dict, path: tuple, grace, lifecycle: bool) -> None:
    """core validateHandler (probes: exec, httpGet, tcpSocket, grpc) / validateLifecycleHandler
    (exec, httpGet, tcpSocket, sleep): exactly one."""
    kinds = ("exec", "httpGet", "tcpSocket", "sleep") if lifecycle else ("exec", "httpGet", "tcpSocket", "grpc")
    given = [k for k in kinds if handler.get(k) is not None]
    if not given:
        s.required(path, "must specify a handler type")
    for extra in given[1:]:
        s.forbidden(path + (extra,), "may not specify more than 1 handler type")
    exec_ = handler.get("exec")
    if isinstance(exec_, dict) and not exec_.get("command"):  # validateExecAction
        s.required(path + ("exec", "command"))
    http = handler.get("httpGet")
    if isinstance(http, dict):  # validateHTTPGetAction
        if not http.get("path") and not lifecycle:
            pass  # defaulted to "/"
        _port_num_or_name(s, http.get("port"), path + ("httpGet", "port"))
        scheme = http.get("scheme")
        if scheme is not None and scheme not in SCHEMES:
            s.unsupported(path + ("httpGet", "scheme"), scheme, SCHEMES)
        for j, header in enumerate(http.get("httpHeaders") or []):
            if isinstance(header, dict) and not header.get("name"):
                s.required(path + ("httpGet", "httpHeaders", j, "name"))
    tcp = handler.get("tcpSocket")
    if isinstance(tcp, dict):  # validateTCPSocketAction
        _port_num_or_name(s, tcp.get("port"), path + ("tcpSocket", "port"))
    grpc = handler.get("grpc")
    if isinstance(grpc, dict):  # validateGRPCAction -> ValidatePortNumOrName(port as a number)
        port = grpc.get("port")
        if not _int(port) or not 1 <= port <= 65535:
            s.invalid(path + ("grpc", "port"), port, "must be between 1 and 65535, inclusive")
    sleep = handler.get("sleep")
    if isinstance(sleep, dict):  # validateSleepAction (PodLifecycleSleepActionAllowZero: 0 from 1.33)
        seconds = sleep.get("seconds", 0)
        low = 0 if _v(s, (1, 33)) else 1
        most = grace if _int(grace) else 30
        if not _int(seconds) or seconds < low or seconds > most:
            s.invalid(path + ("sleep", "seconds"), seconds, f"must be non-negative and less than terminationGrace"
                      f"PeriodSeconds ({most})" if low == 0 else f"must be greater than 0 and less than "
                      f"terminationGracePeriodSeconds ({most})")


def _port_num_or_name(s: Sink, port, path: tuple) -> None:
    """core ValidatePortNumOrName."""
    if _int(port):
        if not 1 <= port <= 65535:
            s.invalid(path, port, "must be between 1 and 65535, inclusive")
    elif isinstance(port, str) and port:
        if port.isdigit():
            if not 1 <= int(port) <= 65535:
                s.invalid(path, port, "must be between 1 and 65535, inclusive")
            return
        problem = port_name_problem(port)
        if problem:
            s.invalid(path, port, problem)
    else:
        s.required(path)


# --- resources ------------------------------------------------------------------------------------

def _quantity(s: Sink, path: tuple, value, name: str):
    """apimachinery resource.ParseQuantity; core ValidateNonnegativeQuantity."""
    text = str(value)
    problem = quantity_size_problem(text)
    if problem:
        s.invalid(path, value, "quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        return None
    whole = _whole_quantity(text)
    if whole is not None:
        return whole
    try:
        return parse_quantity(text)
    except ValueError:
        s.invalid(path, value, "quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        return None


_WHOLE_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
                 "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def _whole_quantity(text: str) -> int | None:
    """`2`, `8Gi`: a whole number times a whole suffix is an exact int, compared with the Decimals of
    other quantities as equal values; `decimal` is then left unimported on the compile path of the usual
    specs (tests/project/test_startup_imports.py).  None for anything else (fractions, exponents, m/u/n, signs)."""
    digits = text.rstrip("kMGTPEi")
    suffix = text[len(digits):]
    if digits.isascii() and digits.isdigit() and suffix in _WHOLE_SUFFIX:
        return int(digits) * _WHOLE_SUFFIX[suffix]
    return None


def _resources(s: Sink, resources, path: tuple) -> None:
    """core ValidateContainerResourceRequirements: names (validateContainerResourceName), values
    (ValidateResourceQuantityValue), requests <= limits, hugepages with cpu or memory."""
    if not isinstance(resources, dict):
        return
    parsed: dict[str, dict] = {}
    for section in ("limits", "requests"):
        values = resources.get(section) or {}
        parsed[section] = {}
        for name, value in (values.items() if isinstance(values, dict) else ()):
            fp = path + (section, name)
            problem = container_resource_name_problem(name)
            if problem:
                s.invalid(fp, name, problem)
                continue
            # a null quantity decodes as the zero Quantity ("0"), as the server stores it
            number = _quantity(s, fp, "0" if value is None else value, name)
            if number is None:
                continue
            problem = resource_value_problem(name, number)
            if problem:
                s.invalid(fp, str(value), problem)
                continue
            parsed[section][name] = number
    limits, requests = parsed["limits"], parsed["requests"]
    for name, value in requests.items():
        if name in limits and value > limits[name]:
            s.invalid(path + ("requests", name), str(resources["requests"][name]),
                      f"must be less than or equal to {name} limit of {resources['limits'][name]}")
        elif name not in limits and (is_hugepages(name) or "/" in name and "kubernetes.io/" not in name):
            s.invalid(path + ("requests", name), str(resources["requests"][name]), "must be equal to " + name +
                      " limit" if "/" in name else f"{name} limit must be specified")
    for name, value in limits.items():
        if "/" in name and "kubernetes.io/" not in name and name in requests and requests[name] != value:
            s.invalid(path + ("requests", name), str(resources["requests"][name]), f"must be equal to {name} limit "
                      f"of {resources['limits'][name]}")
    if any(is_hugepages(n) for n in list(limits) + list(requests)) and not any(
            n in limits or n in requests for n in ("cpu", "memory")):
        s.forbidden(path, "HugePages require cpu or memory")


# --- security -------------------------------------------------------------------------------------

def _security_context(s: Sink, sc, path: tuple) -> None:
    """core ValidateSecurityContext."""
    if not isinstance(sc, dict):
        return
    for field in ("runAsUser", "runAsGroup"):
        value = sc.get(field)
        if value is not None and (not _int(value) or not 0 <= value <= 2**31 - 1):
            s.invalid(path + (field,), value, "must be between 0 and 2147483647, inclusive")
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged"):
            s.invalid(path, "", "cannot set `allowPrivilegeEscalation` to false and `privileged` to true")
        added = (sc.get("capabilities") or {}).get("add") or []
        if "CAP_SYS_ADMIN" in added:
            s.invalid(path, "", "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN")
    _windows_options(s, sc.get("windowsOptions"), path + ("windowsOptions",))
    proc = sc.get("procMount")
    if proc is not None and proc not in ("Default", "Unmasked"):
        s.unsupported(path + ("procMount",), proc, ("Default", "Unmasked"))
    _profiles(s, sc, path)


def _windows_options(s: Sink, options, path: tuple) -> None:
    """core validateWindowsSecurityContextOptions: gmsaCredentialSpecName a DNS subdomain, gmsaCredentialSpec
    and runAsUserName not empty when set."""
    if not isinstance(options, dict):
        return
    name = options.get("gmsaCredentialSpecName")
    if name is not None and subdomain_problem(str(name)):
        s.invalid(path + ("gmsaCredentialSpecName",), name, subdomain_problem(str(name)) or "")
    if options.get("gmsaCredentialSpec") == "":
        s.invalid(path + ("gmsaCredentialSpec",), "", "gmsaCredentialSpec cannot be an empty string")
    user = options.get("runAsUserName")
    if user == "":
        s.invalid(path + ("runAsUserName",), "", "runAsUserName cannot be an empty string")
    elif isinstance(user, str) and (len(user) > 256 or len(user.rpartition("\\")[2]) > 104):
        s.invalid(path + ("runAsUserName",), user, "runAsUserName's length must not exceed 256 characters, its "
                  "User part 104")
    elif isinstance(user, str) and any(ch in user.rpartition("\\")[2] for ch in '"/\\:;|=,+*?<>@[]'):
        s.invalid(path + ("runAsUserName",), user, "runAsUserName's User cannot contain the following characters: "
                  '"/\\:;|=,+*?<>@[]')


def _profiles(s: Sink, sc: dict, path: tuple) -> None:
    """core validateSeccompProfileField / validateAppArmorProfileField."""
    for field in ("seccompProfile", "appArmorProfile"):
        profile = sc.get(field)
        if not isinstance(profile, dict):
            continue
        kind = profile.get("type")
        if kind not in ("RuntimeDefault", "Unconfined", "Localhost"):
            s.unsupported(path + (field, "type"), kind, ("Localhost", "RuntimeDefault", "Unconfined"))
        local = profile.get("localhostProfile")
        if kind == "Localhost" and not local:
            s.required(path + (field, "localhostProfile"), "must be set when seccomp type is Localhost")
        elif kind != "Localhost" and local:
            s.invalid(path + (field, "localhostProfile"), local, "can only be set when seccomp type is Localhost")


def _pod_security_context(s: Sink, sc, path: tuple) -> None:
    """core validatePodSpecSecurityContext."""
    if not isinstance(sc, dict):
        return
    for field in ("runAsUser", "runAsGroup", "fsGroup"):
        value = sc.get(field)
        if value is not None and (not _int(value) or not 0 <= value <= 2**31 - 1):
            s.invalid(path + (field,), value, "must be between 0 and 2147483647, inclusive")
    for i, group in enumerate(sc.get("supplementalGroups") or []):
        if not _int(group) or not 0 <= group <= 2**31 - 1:
            s.invalid(path + ("supplementalGroups", i), group, "must be between 0 and 2147483647, inclusive")
    policy = sc.get("supplementalGroupsPolicy")  # validateSupplementalGroupsPolicy (1.31+)
    if policy is not None and policy not in ("Merge", "Strict"):
        s.unsupported(path + ("supplementalGroupsPolicy",), policy, ("Merge", "Strict"))
    _windows_options(s, sc.get("windowsOptions"), path + ("windowsOptions",))
    selinux = sc.get("seLinuxChangePolicy")  # validateSELinuxChangePolicy (MountOption: SELinuxMount gate, off)
    if selinux is not None and selinux != "Recursive":
        s.unsupported(path + ("seLinuxChangePolicy",), selinux, ("Recursive",))
    change = sc.get("fsGroupChangePolicy")
    if change is not None and change not in ("OnRootMismatch", "Always"):
        s.unsupported(path + ("fsGroupChangePolicy",), change, ("OnRootMismatch", "Always"))
    _profiles(s, sc, path)
    seen: set[str] = set()
    for i, sysctl in enumerate(sc.get("sysctls") or []):  # validateSysctls
        name = (sysctl or {}).get("name") if isinstance(sysctl, dict) else None
        if not name:
            s.required(path + ("sysctls", i, "name"))
        elif len(name) > 253 or not SYSCTL.match(name):
            s.invalid(path + ("sysctls", i, "name"), name, "must have at most 253 characters and match regex "
                      + SYSCTL.pattern)
        elif name in seen:
            s.duplicate(path + ("sysctls", i, "name"), name)
        seen.add(name or "")


# --- scheduling -----------------------------------------------------------------------------------

def _topology_spread(s: Sink, items, path: tuple) -> None:
    """core validateTopologySpreadConstraints."""
    pairs: set[tuple] = set()
    for i, c in enumerate(items if isinstance(items, list) else []):
        cp = path + (i,)
        if not isinstance(c, dict):
            continue
        skew = c.get("maxSkew")
        if not _int(skew) or skew <= 0:
            s.invalid(cp + ("maxSkew",), skew, "must be greater than zero")
        key = c.get("topologyKey")
        if not key:
            s.required(cp + ("topologyKey",), "can not be empty")
        when = c.get("whenUnsatisfiable")
        if when not in WHEN_UNSATISFIABLE:
            s.unsupported(cp + ("whenUnsatisfiable",), when, WHEN_UNSATISFIABLE)
        minimum = c.get("minDomains")
        if minimum is not None:  # validateMinDomains
            if not _int(minimum) or minimum <= 0:
                s.invalid(cp + ("minDomains",), minimum, "must be greater than 0")
            elif when != "DoNotSchedule":
                s.invalid(cp + ("minDomains",), minimum, "can only use minDomains if whenUnsatisfiable=DoNotSchedule,"
                          f" current value: {when}")
        pair = (key, when)
        if pair in pairs:  # ValidateSpreadConstraintNotRepeat
            s.duplicate(cp, f"{{{key}, {when}}}")
        pairs.add(pair)
        label_selector(s, c.get("labelSelector"), cp + ("labelSelector",))
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = c.get(field)
            if value is not None and value not in INCLUSION_POLICIES:
                s.unsupported(cp + (field,), value, INCLUSION_POLICIES)
        seen: set[str] = set()
        for j, label in enumerate(c.get("matchLabelKeys") or []):  # validateMatchLabelKeysInTopologySpread
            problem = qualified_name_problem(str(label))
            if problem:
                s.invalid(cp + ("matchLabelKeys", j), label, problem)
            seen.add(str(label))
        if c.get("matchLabelKeys") and c.get("labelSelector") is None:
            s.required(cp + ("labelSelector",), "must be specified when matchLabelKeys is set")


EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")
SYSCTL = re.compile(r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$")
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_selector(s: Sink, selector, path: tuple) -> None:
    """metav1 ValidateLabelSelector: matchLabels as labels; each expression's operator, values and key."""
    if not isinstance(selector, dict):
        return
    for key, value in (selector.get("matchLabels") or {}).items():
        problem = qualified_name_problem(str(key)) or label_value_problem(str(value))
        if problem:
            s.invalid(path + ("matchLabels",), key, problem)
    for i, expression in enumerate(selector.get("matchExpressions") or []):
        ep = path + ("matchExpressions", i)
        if not isinstance(expression, dict):
            continue
        op, values = expression.get("operator"), expression.get("values") or []
        if op not in SELECTOR_OPERATORS:
            s.invalid(ep + ("operator",), op, "not a valid selector operator")
        elif op in ("In", "NotIn") and not values:
            s.required(ep + ("values",), "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist") and values:
            s.forbidden(ep + ("values",), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        problem = qualified_name_problem(str(expression.get("key") or ""))
        if problem:
            s.invalid(ep + ("key",), expression.get("key"), problem)


def _tolerations(s: Sink, items, path: tuple) -> None:
    """core validateTolerations: a key is a label name (empty only with Exists); Exists takes no value;
    Equal's value a label value; tolerationSeconds only with NoExecute; operator and effect enums."""
    for i, item in enumerate(items if isinstance(items, list) else []):
        tp = path + (i,)
        if not isinstance(item, dict):
            continue
        key, operator, value, effect = (item.get("key"), item.get("operator"), item.get("value"),
                                        item.get("effect"))
        if key:
            problem = qualified_name_problem(str(key))
            if problem:
                s.invalid(tp + ("key",), key, problem)
        elif operator != "Exists":
            s.invalid(tp + ("operator",), operator, "operator must be Exists when `key` is empty, which means "
                      "\"match all values and all keys\"")
        if item.get("tolerationSeconds") is not None and effect != "NoExecute":
            s.invalid(tp + ("effect",), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
        if operator in (None, "", "Equal"):
            problem = label_value_problem(str(value or ""))
            if problem:
                s.invalid(tp + ("value",), value, problem)
        elif operator == "Exists":
            if value:
                s.invalid(tp + ("operator",), operator, "value must be empty when `operator` is 'Exists'")
        else:
            s.unsupported(tp + ("operator",), operator, ("Equal", "Exists"))
        if effect not in (None, "") and effect not in EFFECTS:
            s.unsupported(tp + ("effect",), effect, EFFECTS)


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


def _affinity(s: Sink, affinity, path: tuple) -> None:
    """core validateAffinity -> validateNodeSelectorTerm's requirements (ValidateNodeSelectorRequirement):
    In/NotIn need values, Exists/DoesNotExist none, Gt/Lt one integer; values label values."""
    if not isinstance(affinity, dict):
        return
    node = affinity.get("nodeAffinity") or {}
    required = (node.get("requiredDuringSchedulingIgnoredDuringExecution") or {}) if isinstance(node, dict) else {}
    terms = [(path + ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", i), t)
             for i, t in enumerate(required.get("nodeSelectorTerms") or [])]
    for i, pref in enumerate((node.get("preferredDuringSchedulingIgnoredDuringExecution") or [])
                             if isinstance(node, dict) else []):
        if isinstance(pref, dict):
            terms.append((path + ("nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", i,
                                  "preference"), pref.get("preference") or {}))
    if isinstance(node, dict) and isinstance(node.get("requiredDuringSchedulingIgnoredDuringExecution"), dict) \
            and not required.get("nodeSelectorTerms"):
        s.required(path + ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"),
                   "must have at least one node selector term")
    for tp, term in terms:
        for j, req in enumerate((term or {}).get("matchExpressions") or []):
            _node_requirement(s, req, tp + ("matchExpressions", j))
        for j, req in enumerate((term or {}).get("matchFields") or []):
            _node_field_requirement(s, req, tp + ("matchFields", j))
    for i, pref in enumerate((node.get("preferredDuringSchedulingIgnoredDuringExecution") or [])
                             if isinstance(node, dict) else []):
        weight = pref.get("weight") if isinstance(pref, dict) else None
        if not _int(weight) or not 1 <= weight <= 100:  # validatePreferredSchedulingTerms
            s.invalid(path + ("nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", i, "weight"), weight,
                      "must be in the range 1-100")
    for kind in ("podAffinity", "podAntiAffinity"):  # validatePodAffinity / validatePodAntiAffinity
        block = affinity.get(kind)
        if not isinstance(block, dict):
            continue
        kp = path + (kind,)
        for i, term in enumerate(block.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            _pod_affinity_term(s, term, kp + ("requiredDuringSchedulingIgnoredDuringExecution", i))
        for i, weighted in enumerate(block.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            wp = kp + ("preferredDuringSchedulingIgnoredDuringExecution", i)
            if not isinstance(weighted, dict):
                continue
            weight = weighted.get("weight")
            if not _int(weight) or not 1 <= weight <= 100:  # validateWeightedPodAffinityTerms
                s.invalid(wp + ("weight",), weight, "must be in the range 1-100")
            _pod_affinity_term(s, weighted.get("podAffinityTerm") or {}, wp + ("podAffinityTerm",))


def _pod_affinity_term(s: Sink, term, path: tuple) -> None:
    """core validatePodAffinityTerm and validateMatchLabelKeysAndMismatchLabelKeys: a topologyKey; the label
    keys only with a labelSelector; a matchLabelKeys key refused where a matchExpression repeats a key the
    selector already has; no key in both matchLabelKeys and mismatchLabelKeys."""
    if not isinstance(term, dict):
        return
    key = term.get("topologyKey")
    if not key:
        s.required(path + ("topologyKey",), "can not be empty")
    else:
        problem = qualified_name_problem(str(key))
        if problem:
            s.invalid(path + ("topologyKey",), key, problem)
    for i, namespace in enumerate(term.get("namespaces") or []):
        problem = dns_label_problem(str(namespace))
        if problem:
            s.invalid(path + ("namespaces", i), namespace, problem)
    selector = term.get("labelSelector")
    label_selector(s, selector, path + ("labelSelector",))
    label_selector(s, term.get("namespaceSelector"), path + ("namespaceSelector",))
    match, mismatch = term.get("matchLabelKeys") or [], term.get("mismatchLabelKeys") or []
    for field, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if keys and selector is None:
            s.forbidden(path + (field,), "must not be specified when labelSelector is not set")
            continue
        for i, label in enumerate(keys):
            problem = qualified_name_problem(str(label))
            if problem:
                s.invalid(path + (field, i), label, problem)
    if isinstance(selector, dict):
        seen = set(selector.get("matchLabels") or {})
        for expression in selector.get("matchExpressions") or []:
            label = expression.get("key") if isinstance(expression, dict) else None
            if label in match and label in seen:
                s.invalid(path + (match.index(label),), label, "exists in both matchLabelKeys and labelSelector")
            seen.add(label)
    for i, label in enumerate(match):
        if label in mismatch:
            s.invalid(path + ("matchLabelKeys", i), label, "exists in both matchLabelKeys and mismatchLabelKeys")


def _node_field_requirement(s: Sink, req, path: tuple) -> None:
    """core validateNodeFieldSelectorRequirement: In or NotIn on metadata.name, with one value."""
    if not isinstance(req, dict):
        return
    op, values = req.get("operator"), req.get("values") or []
    if op not in ("In", "NotIn"):
        s.invalid(path + ("operator",), op, "not a valid selector operator")
    elif len(values) != 1:
        s.required(path + ("values",), "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                   "selector")
    if req.get("key") != "metadata.name":
        s.invalid(path + ("key",), req.get("key"), "not a valid field selector key")


def _node_requirement(s: Sink, req, path: tuple) -> None:
    """core ValidateNodeSelectorRequirement."""
    if not isinstance(req, dict):
        return
    op, values = req.get("operator"), req.get("values") or []
    if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        s.invalid(path + ("operator",), op, "not a valid selector operator")
    if op in ("In", "NotIn") and not values:
        s.required(path + ("values",), "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist") and values:
        s.forbidden(path + ("values",), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            s.required(path + ("values",), "must be specified single value when `operator` is 'Lt' or 'Gt'")
    for k, value in enumerate(values if op not in ("Gt", "Lt") else []):
        problem = label_value_problem(str(value))
        if problem:
            s.invalid(path + ("values", k), value, problem)
    key = req.get("key")
    problem = qualified_name_problem(str(key or ""))
    if problem:
        s.invalid(path + ("key",), key, problem)
