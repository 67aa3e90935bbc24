"""A pod's containers: kubernetes pkg/apis/core/validation validateContainers / validateInitContainers
(names, images, ports and host ports, env and envFrom, volume mounts, probes and lifecycle handlers,
resources); a container's security context is security.py's."""

from __future__ import annotations

from ..kube_rules import (
    container_resource_name_problem,
    is_hugepages,
    port_name_problem,
    resource_value_problem,
    subdomain_problem,
)
from .findings import Sink
from .security import check_security_context
from .values import dns_label_problem, env_name_problem, is_int, local_path, qualified_name_problem, quantity

PROTOCOLS = ("SCTP", "TCP", "UDP")


PULL_POLICIES = ("Always", "IfNotPresent", "Never")


MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")


PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")


RECURSIVE_READ_ONLY = ("Disabled", "IfPossible", "Enabled")


SCHEMES = ("HTTP", "HTTPS")


FIELD_REFS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
              "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")


def _v(s: Sink, low: tuple[int, int]) -> bool:
    """Whether the Kubernetes version checked is `low` or later (a feature gate on by default there)."""
    return s.version >= low


def check_container(s: Sink, c, path: tuple, volumes: dict, names: set, spec: dict, grace, init: bool) -> None:
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
    check_security_context(s, c.get("securityContext"), path + ("securityContext",))
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
        elif not is_int(number) or not 1 <= number <= 65535:
            s.invalid(pp + ("containerPort",), number, "must be between 1 and 65535, inclusive")
        host = port.get("hostPort")
        if host not in (None, 0) and (not is_int(host) or not 1 <= host <= 65535):
            s.invalid(pp + ("hostPort",), host, "must be between 1 and 65535, inclusive")
        protocol = port.get("protocol")
        if protocol and protocol not in PROTOCOLS:  # "" and unset: defaulted to TCP
            s.unsupported(pp + ("protocol",), protocol, PROTOCOLS)
        if spec.get("hostNetwork") and host not in (None, 0) and host != number:  # validateHostNetwork
            s.invalid(pp + ("hostPort",), host, "must match `containerPort` when `hostNetwork` is true")


def host_ports(s: Sink, containers: list[tuple[str, int, dict]], path: tuple) -> None:
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
            local_path(s, sub, mp + ("subPath",))
        if expr:
            local_path(s, expr, mp + ("subPathExpr",))
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


def _probe(s: Sink, probe, path: tuple, kind: str, grace) -> None:
    """core validateProbe (and validateLivenessProbe / validateStartupProbe: successThreshold 1)."""
    if not isinstance(probe, dict):
        return
    _handler(s, probe, path, grace, lifecycle=False)
    for field in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        value = probe.get(field)
        if value is not None and is_int(value) and value < 0:
            s.invalid(path + (field,), value, "must be greater than or equal to 0")
    if kind != "readinessProbe" and probe.get("successThreshold") not in (None, 0, 1):
        s.invalid(path + ("successThreshold",), probe["successThreshold"], "must be 1")
    term = probe.get("terminationGracePeriodSeconds")
    if term is not None:
        if kind == "readinessProbe":
            s.invalid(path + ("terminationGracePeriodSeconds",), term, "must not be set for readinessProbes")
        elif is_int(term) and term <= 0:
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
        if not is_int(port) or not 1 <= port <= 65535:
            s.invalid(path + ("grpc", "port"), port, "must be between 1 and 65535, inclusive")
    sleep = handler.get("sleep")
    if isinstance(sleep, dict):  # validateSleepAction (PodLifecycleSleepActionAllowZero: 0 from 1.33)
        seconds = sleep.get("seconds", 0)
        low = 0 if _v(s, (1, 33)) else 1
        most = grace if is_int(grace) else 30
        if not is_int(seconds) or seconds < low or seconds > most:
            s.invalid(path + ("sleep", "seconds"), seconds, f"must be non-negative and less than terminationGrace"
                      f"PeriodSeconds ({most})" if low == 0 else f"must be greater than 0 and less than "
                      f"terminationGracePeriodSeconds ({most})")


def _port_num_or_name(s: Sink, port, path: tuple) -> None:
    """core ValidatePortNumOrName."""
    if is_int(port):
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
            number = quantity(s, fp, "0" if value is None else value, name)
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
