"""Service, ConfigMap, Secret and Pod: kubernetes pkg/apis/core/validation/validation.go (ValidateService,
ValidateConfigMap, ValidateSecret, ValidatePodCreate); their metadata is meta.py's."""

from __future__ import annotations

from ..kube import CONFIG_KEY
from ..kube_rules import dns_label_problem, job_name_ok, port_name_problem, subdomain_problem
from .findings import Sink
from .meta import label_value_problem, object_name, qualified_name_problem
from .pod import pod_spec

DATA_MAX = 1024 * 1024  # core MaxSecretSize; ConfigMap: the same 1 MiB (validateConfigMap's totalSize)
SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
PROTOCOLS = ("SCTP", "TCP", "UDP")




def _is_ip(text: str) -> bool:
    """netutils ParseIPSloppy, as ValidateService's validateClusterIPFlags reads a clusterIP."""
    import ipaddress

    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def service(s: Sink, doc: dict) -> None:
    """core ValidateService: the name (ValidateServiceName, per version), type, ports (required unless headless
    or ExternalName; names unique and IsValidPortName when more than one, numbers 1-65535, protocols), a
    clusterIP that is an IP, the selector's labels."""
    object_name(s, doc, lambda n: None if job_name_ok(n, s.version) else
          "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
          "character, and end with an alphanumeric character")
    spec = doc.get("spec") or {}
    kind = spec.get("type")
    if kind is not None and kind not in SERVICE_TYPES:
        s.unsupported(("spec", "type"), kind, SERVICE_TYPES)
    ports = spec.get("ports") or []
    cluster_ip = spec.get("clusterIP")
    if not ports and cluster_ip != "None" and kind != "ExternalName":  # a headless Service may have none
        s.required(("spec", "ports"))
    if isinstance(cluster_ip, str) and cluster_ip not in ("", "None") and not _is_ip(cluster_ip):
        # the server fills clusterIPs from clusterIP first (dropDisabledFields / defaulting), then ValidateService
        s.invalid(("spec", "clusterIPs", 0), cluster_ip,
                  "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")
    names: set[str] = set()
    seen: set[tuple] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        pp = ("spec", "ports", i)
        if not isinstance(port, dict):
            continue
        name = port.get("name")
        if len(ports) > 1 and not name:
            s.required(pp + ("name",))
        if name:
            problem = dns_label_problem(name) if False else port_name_problem(name)
            if problem:
                s.invalid(pp + ("name",), name, problem)
            elif name in names:
                s.duplicate(pp + ("name",), name)
            names.add(name)
        number = port.get("port")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            s.invalid(pp + ("port",), number, "must be between 1 and 65535, inclusive")
        protocol = port.get("protocol", "TCP")
        if protocol not in PROTOCOLS:
            s.unsupported(pp + ("protocol",), protocol, PROTOCOLS)
        key = (number, protocol)
        if key in seen:
            s.duplicate(pp, f"{{{number}, {protocol}}}")
        seen.add(key)
        target = port.get("targetPort")
        if isinstance(target, int) and not 1 <= target <= 65535:
            s.invalid(pp + ("targetPort",), target, "must be between 1 and 65535, inclusive")
        elif isinstance(target, str) and target and not target.isdigit():
            problem = port_name_problem(target)
            if problem:
                s.invalid(pp + ("targetPort",), target, problem)
    if spec.get("clusterIP") == "None" and kind in ("NodePort", "LoadBalancer"):
        s.invalid(("spec", "clusterIP"), "None", f"may not be set to 'None' for {kind} services")
    selector = spec.get("selector") or {}
    for key, value in selector.items() if isinstance(selector, dict) else ():
        problem = qualified_name_problem(str(key)) or label_value_problem(str(value))
        if problem:
            s.invalid(("spec", "selector"), key, problem)


def _data(s: Sink, doc: dict, fields: tuple[str, ...], what: str) -> None:
    """core ValidateConfigMap / ValidateSecret: keys IsConfigMapKey, unique across data and binaryData,
    at most 1 MiB in all."""
    total = 0
    keys: set[str] = set()
    for field in fields:
        data = doc.get(field) or {}
        for key, value in data.items() if isinstance(data, dict) else ():
            if not key or len(key) > 253 or not CONFIG_KEY.match(key) or key in (".", "..") or key.startswith(".."):
                s.invalid((field,), key, "a valid config key must consist of alphanumeric characters, '-', '_' "
                          "or '.'")
            if key in keys:
                s.invalid((field,), key, "duplicate of key present in " + fields[0])
            keys.add(key)
            total += len(str(value))
    if total > DATA_MAX:
        s.add((fields[0],), f"Too long: may not be more than {DATA_MAX} bytes")


def config_map(s: Sink, doc: dict) -> None:
    """core ValidateConfigMap (ValidateConfigMapName: a DNS subdomain)."""
    object_name(s, doc, subdomain_problem)
    _data(s, doc, ("data", "binaryData"), "ConfigMap")


def secret(s: Sink, doc: dict) -> None:
    """core ValidateSecret (ValidateSecretName: a DNS subdomain)."""
    object_name(s, doc, subdomain_problem)
    _data(s, doc, ("data", "stringData"), "Secret")


def pod(s: Sink, doc: dict) -> None:
    """core ValidatePodCreate -> ValidatePodSpec."""
    object_name(s, doc, subdomain_problem)
    pod_spec(s, doc.get("spec"), ("spec",))


KINDS = {"Service": service, "ConfigMap": config_map, "Secret": secret, "Pod": pod}
