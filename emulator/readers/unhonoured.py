"""Fields the emulator cannot honour: refused, or run without them with a note naming them.

Never silently dropped (issue 23). Refused when running without the field would change
what the job can see or do on the host side (another runtime's isolation, a shared PID
namespace, an AppArmor profile, a second volume source the API server itself refuses, a
compose file that pulls other files or host objects in); a note when only the job's own
name resolution or limits differ (dnsConfig, hostAliases, compose dns/extra_hosts/ulimits,
oom settings, build). The readers' own refusals (security.py: privileged, host namespaces,
capabilities...) stay where they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ...compiler.errors import dotted
from .positions import field_error

HINT = "remove the field to run it locally (the emulator cannot reproduce it)"
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
VOLUME_SOURCES = ("persistentVolumeClaim", "hostPath", "emptyDir", "configMap", "secret", "nfs", "csi", "ephemeral",
                  "projected", "downwardAPI", "iscsi", "rbd", "cephfs", "glusterfs", "awsElasticBlockStore",
                  "gcePersistentDisk", "azureDisk", "azureFile", "image", "fc", "flocker", "gitRepo", "portworxVolume",
                  "quobyte", "scaleIO", "storageos", "vsphereVolume", "photonPersistentDisk", "flexVolume", "cinder")


def _templates(doc: dict) -> Iterator[tuple[tuple, dict]]:
    """(path, pod template) of every pod template in one object (k8s workloads and the operators' CRs)."""
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    kind = doc.get("kind")
    if kind in ("Job", "Deployment", "StatefulSet") and isinstance(spec.get("template"), dict):
        yield ("spec", "template"), spec["template"]
    if kind == "Pod":
        yield (), doc
    for key, value in spec.items():
        if key.endswith("ReplicaSpecs") and isinstance(value, dict):
            for rtype, rspec in value.items():
                if isinstance(rspec, dict) and isinstance(rspec.get("template"), dict):
                    yield ("spec", key, rtype, "template"), rspec["template"]
    for i, task in enumerate(spec.get("tasks") or [] if isinstance(spec.get("tasks"), list) else []):
        if isinstance(task, dict) and isinstance(task.get("template"), dict):
            yield ("spec", "tasks", i, "template"), task["template"]
    for i, rj in enumerate(spec.get("replicatedJobs") or [] if isinstance(spec.get("replicatedJobs"), list) else []):
        jspec = ((rj or {}).get("template") or {}).get("spec") if isinstance(rj, dict) else None
        if isinstance(jspec, dict) and isinstance(jspec.get("template"), dict):
            yield ("spec", "replicatedJobs", i, "template", "spec", "template"), jspec["template"]


def k8s_fields(docs: list[Any], source: str) -> list[str]:
    """Refuse the pod fields the emulator cannot honour; the notes for those it runs without."""
    notes: list[str] = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
        for path, tmpl in _templates(doc):
            label = f"{doc.get('kind')} {name} {dotted(path) or '(pod)'}"
            notes += _pod(tmpl, source, label)
    return list(dict.fromkeys(notes))


def _pod(tmpl: dict, source: str, label: str) -> list[str]:
    """`tmpl`: a pod template (or a Pod); `label` names it in notes, and in errors without a position."""
    notes: list[str] = []
    where = f"{source}: {label}"

    def refused(path: tuple, message: str, expected: str = "", hint: str = HINT) -> Exception:
        return field_error(source, tmpl, path, message, expected, hint, label)

    pod: dict = tmpl["spec"] if isinstance(tmpl.get("spec"), dict) else {}
    meta: dict = tmpl["metadata"] if isinstance(tmpl.get("metadata"), dict) else {}
    if pod.get("shareProcessNamespace"):
        raise refused(("spec", "shareProcessNamespace"), "true is not supported by the emulator (each container "
                      "has its own PID namespace here)")
    if pod.get("runtimeClassName"):
        raise refused(("spec", "runtimeClassName"), f"{pod['runtimeClassName']!r} is not supported by the emulator "
                      "(it would run under Docker's default runtime, without that isolation)")
    for key in ("dnsConfig", "hostAliases", "dnsPolicy"):
        if pod.get(key) not in (None, [], {}) and not (key == "dnsPolicy" and pod[key] == "ClusterFirst"):
            notes.append(f"{where}.spec.{key} is not applied by the emulator (replicas resolve each other by the "
                         "run's hosts files and Docker's DNS)")
    for key, value in (meta.get("annotations") or {}).items() if isinstance(meta.get("annotations"), dict) else []:
        if str(key).startswith(APPARMOR_PREFIX) and value != "runtime/default":
            raise refused(("metadata", "annotations", key), f"{value!r}: AppArmor profiles other than "
                          "runtime/default are not supported by the emulator")
    for sc_path, sc in ((("spec", "securityContext"), pod.get("securityContext")),
                        *((("spec", "containers", i, "securityContext"), c.get("securityContext"))
                          for i, c in enumerate(pod.get("containers") or []) if isinstance(c, dict))):
        if isinstance(sc, dict) and "seccompProfile" in sc and not isinstance(sc["seccompProfile"], (dict, type(None))):
            raise refused(sc_path + ("seccompProfile",), f"is {type(sc['seccompProfile']).__name__}",
                          "a mapping {type: RuntimeDefault|Unconfined|Localhost}", hint="")
    for i, vol in enumerate(pod.get("volumes") or []):
        if isinstance(vol, dict):
            sources = [k for k in vol if k in VOLUME_SOURCES]
            if len(sources) > 1:
                raise refused(("spec", "volumes", i), f"({vol.get('name')}) has {len(sources)} sources "
                              f"({', '.join(sources)})", "exactly one (the API server refuses it too)", hint="")
    return notes


# -- compose -------------------------------------------------------------------------------

_COMPOSE_TOP_REFUSED = {
    "include": "it reads other compose files", "configs": "top-level configs are not provided by the emulator",
    "secrets": "top-level secrets are not provided by the emulator (compiled compose files mount Secret folders "
               "as binds)",
}
_SERVICE_REFUSED = {
    "env_file": "it reads environment files from the host; pass the variables with -e or --env-file and write "
                "them in `environment`",
    "extends": "it reads another service or file", "configs": "configs are not provided by the emulator",
    "secrets": "secrets are not provided by the emulator", "net": "it sets the network mode",
}
_SERVICE_NOTED = ("build", "extra_hosts", "dns", "dns_search", "dns_opt", "ulimits", "oom_kill_disable",
                  "oom_score_adj", "mem_swappiness", "memswap_limit", "storage_opt", "logging")


# Bind propagation other than private would share mounts between the host and the container.
_PRIVATE = (None, "", "private", "rprivate")
_SHORT_PROPAGATION = {"shared", "rshared", "slave", "rslave"}


def compose_fields(doc: dict, source: str) -> list[str]:
    notes: list[str] = []

    def refused(path: tuple, message: str, expected: str = "", hint: str = HINT) -> Exception:
        return field_error(source, doc, path, message, expected, hint)

    for key, why in _COMPOSE_TOP_REFUSED.items():
        if doc.get(key):
            raise refused((key,), f"not supported by the emulator ({why})")
    for name, net in (doc.get("networks") or {}).items() if isinstance(doc.get("networks"), dict) else []:
        # Each run gets its own bridge network; an external one (`name: host`) or another driver
        # would be replaced without a word.
        for key in ("external", "driver", "driver_opts", "ipam"):
            value = net.get(key) if isinstance(net, dict) else None
            if value not in (None, False, {}, "") and not (key == "driver" and value == "bridge"):
                raise refused(("networks", name, key), "not supported by the emulator (every run gets its own "
                              "bridge network)")
    for name, vol in (doc.get("volumes") or {}).items() if isinstance(doc.get("volumes"), dict) else []:
        if isinstance(vol, dict):
            for key in ("driver", "driver_opts", "external"):
                if vol.get(key) not in (None, False, "local", {}) or (key == "driver_opts" and vol.get(key)):
                    raise refused(("volumes", name, key), "not supported by the emulator (a named volume is a "
                                  "folder under the state folder; driver options can bind any host path)")
    for name, svc in (doc.get("services") or {}).items() if isinstance(doc.get("services"), dict) else []:
        if not isinstance(svc, dict):
            continue
        for key, why in _SERVICE_REFUSED.items():
            if svc.get(key) not in (None, [], {}, ""):
                raise refused(("services", name, key), f"not supported by the emulator ({why})")
        _compose_service(doc, name, svc, refused)
        for key in _SERVICE_NOTED:
            if svc.get(key) not in (None, [], {}, ""):
                notes.append(f"{source}: services.{name}.{key} is not applied by the emulator")
        limits = ((svc.get("deploy") or {}).get("resources") or {}).get("limits") or {} \
            if isinstance(svc.get("deploy"), dict) else {}
        for key, value in (("pids_limit", svc.get("pids_limit")),
                           ("deploy.resources.limits.pids", limits.get("pids") if isinstance(limits, dict) else None)):
            if isinstance(value, int) and not isinstance(value, bool) and value <= 0:
                notes.append(f"{source}: services.{name}.{key} {value} (unlimited) is not applied: the run's "
                             "pids limit applies (--pids-limit; none lifts it)")
    return notes


def _compose_service(doc: dict, name: str, svc: dict, refused: Callable[..., Exception]) -> None:
    """Counts, dependencies and mount options a compose service names that the emulator would
    otherwise run without."""
    at = ("services", name)
    deploy = svc["deploy"] if isinstance(svc.get("deploy"), dict) else {}
    for path, count in ((("scale",), svc.get("scale")), (("deploy", "replicas"), deploy.get("replicas"))):
        if count not in (None, 1):
            raise refused(at + path, f"{count!r} containers of one service are not run by the emulator (one "
                          "container per service; `docker compose` would start that many)",
                          hint="write one service per replica, as `trainspec compile --target compose` does")
    deps = svc.get("depends_on")
    for dep in (deps if isinstance(deps, (dict, list)) else []):
        if not isinstance(dep, str) or dep not in (doc.get("services") or {}):
            raise refused(at + ("depends_on",), f"{dep!r} is not a service of this file (docker compose refuses "
                          "it too)", hint="")
    for i, vol in enumerate(svc.get("volumes") or [] if isinstance(svc.get("volumes"), list) else []):
        vat = at + ("volumes", i)
        target: object
        if isinstance(vol, str):
            parts = vol.split(":")
            target, options = (parts[1] if len(parts) > 1 else parts[0]), set(
                parts[2].split(",") if len(parts) > 2 else [])
            propagation = next(iter(options & _SHORT_PROPAGATION), None)
            subpath = None
        elif isinstance(vol, dict):
            target = vol.get("target")
            bind = vol["bind"] if isinstance(vol.get("bind"), dict) else {}
            volume = vol["volume"] if isinstance(vol.get("volume"), dict) else {}
            propagation, subpath = bind.get("propagation"), volume.get("subpath")
        else:
            raise refused(vat, f"is {type(vol).__name__}", "a string or a mapping", hint="")
        if not isinstance(target, str) or not target.startswith("/"):
            raise refused(vat, f"target {target!r} is not an absolute path in the container", hint="")
        if propagation not in _PRIVATE:
            raise refused(vat, f"bind propagation {propagation!r} is not supported by the emulator (its mounts never "
                          "propagate between the host and a container)")
        if subpath not in (None, ""):
            raise refused(vat, "volume.subpath is not supported by the emulator (the whole volume would be mounted)")
