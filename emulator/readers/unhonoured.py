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

from collections.abc import Iterator
from typing import Any

from ...compiler.errors import UsageError

HINT = "remove the field to run it locally (the emulator cannot reproduce it)"
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
VOLUME_SOURCES = ("persistentVolumeClaim", "hostPath", "emptyDir", "configMap", "secret", "nfs", "csi", "ephemeral",
                  "projected", "downwardAPI", "iscsi", "rbd", "cephfs", "glusterfs", "awsElasticBlockStore",
                  "gcePersistentDisk", "azureDisk", "azureFile", "image", "fc", "flocker", "gitRepo", "portworxVolume",
                  "quobyte", "scaleIO", "storageos", "vsphereVolume", "photonPersistentDisk", "flexVolume", "cinder")


def _templates(doc: dict) -> Iterator[tuple[str, dict]]:
    """(path, pod template) of every pod template in one object (k8s workloads and the operators' CRs)."""
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    kind = doc.get("kind")
    if kind in ("Job", "Deployment") and isinstance(spec.get("template"), dict):
        yield "spec.template", spec["template"]
    if kind == "Pod":
        yield "(pod)", {"metadata": doc.get("metadata") or {}, "spec": spec}
    for key, value in spec.items():
        if key.endswith("ReplicaSpecs") and isinstance(value, dict):
            for rtype, rspec in value.items():
                if isinstance(rspec, dict) and isinstance(rspec.get("template"), dict):
                    yield f"spec.{key}.{rtype}.template", rspec["template"]
    for i, task in enumerate(spec.get("tasks") or [] if isinstance(spec.get("tasks"), list) else []):
        if isinstance(task, dict) and isinstance(task.get("template"), dict):
            yield f"spec.tasks[{i}].template", task["template"]
    for i, rj in enumerate(spec.get("replicatedJobs") or [] if isinstance(spec.get("replicatedJobs"), list) else []):
        jspec = ((rj or {}).get("template") or {}).get("spec") if isinstance(rj, dict) else None
        if isinstance(jspec, dict) and isinstance(jspec.get("template"), dict):
            yield f"spec.replicatedJobs[{i}].template.spec.template", jspec["template"]


def k8s_fields(docs: list[Any], source: str) -> list[str]:
    """Refuse the pod fields the emulator cannot honour; the notes for those it runs without."""
    notes: list[str] = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
        for path, tmpl in _templates(doc):
            where = f"{source}: {doc.get('kind')} {name} {path}"
            notes += _pod(tmpl, where)
    return list(dict.fromkeys(notes))


def _pod(tmpl: dict, where: str) -> list[str]:
    notes: list[str] = []
    pod: dict = tmpl["spec"] if isinstance(tmpl.get("spec"), dict) else {}
    meta: dict = tmpl["metadata"] if isinstance(tmpl.get("metadata"), dict) else {}
    if pod.get("shareProcessNamespace"):
        raise UsageError(f"{where}.spec.shareProcessNamespace: true is not supported by the emulator (each container "
                         f"has its own PID namespace here); hint: {HINT}")
    if pod.get("runtimeClassName"):
        raise UsageError(f"{where}.spec.runtimeClassName {pod['runtimeClassName']!r} is not supported by the emulator "
                         f"(it would run under Docker's default runtime, without that isolation); hint: {HINT}")
    for key in ("dnsConfig", "hostAliases", "dnsPolicy"):
        if pod.get(key) not in (None, [], {}) and not (key == "dnsPolicy" and pod[key] == "ClusterFirst"):
            notes.append(f"{where}.spec.{key} is not applied by the emulator (replicas resolve each other by the "
                         "run's hosts files and Docker's DNS)")
    for key, value in (meta.get("annotations") or {}).items() if isinstance(meta.get("annotations"), dict) else []:
        if str(key).startswith(APPARMOR_PREFIX) and value != "runtime/default":
            raise UsageError(f"{where}.metadata.annotations[{key}] {value!r}: AppArmor profiles other than "
                             f"runtime/default are not supported by the emulator; hint: {HINT}")
    for sc_where, sc in ((".spec.securityContext", pod.get("securityContext")),
                         *((f".spec.containers[{i}].securityContext", c.get("securityContext"))
                           for i, c in enumerate(pod.get("containers") or []) if isinstance(c, dict))):
        if isinstance(sc, dict) and "seccompProfile" in sc and not isinstance(sc["seccompProfile"], (dict, type(None))):
            raise UsageError(f"{where}{sc_where}.seccompProfile: is {type(sc['seccompProfile']).__name__}; expected a "
                             "mapping {type: RuntimeDefault|Unconfined|Localhost}")
    for i, vol in enumerate(pod.get("volumes") or []):
        if isinstance(vol, dict):
            sources = [k for k in vol if k in VOLUME_SOURCES]
            if len(sources) > 1:
                raise UsageError(f"{where}.spec.volumes[{i}] ({vol.get('name')}): has {len(sources)} sources "
                                 f"({', '.join(sources)}); expected exactly one (the API server refuses it too)")
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
                  "oom_score_adj", "mem_swappiness", "memswap_limit", "pids_limit", "storage_opt", "logging")


# Bind propagation other than private would share mounts between the host and the container.
_PRIVATE = (None, "", "private", "rprivate")
_SHORT_PROPAGATION = {"shared", "rshared", "slave", "rslave"}


def compose_fields(doc: dict, source: str) -> list[str]:
    notes: list[str] = []
    for key, why in _COMPOSE_TOP_REFUSED.items():
        if doc.get(key):
            raise UsageError(f"{source}: {key}: not supported by the emulator ({why}); hint: {HINT}")
    for name, net in (doc.get("networks") or {}).items() if isinstance(doc.get("networks"), dict) else []:
        # Each run gets its own bridge network; an external one (`name: host`) or another driver
        # would be replaced without a word.
        for key in ("external", "driver", "driver_opts", "ipam"):
            value = net.get(key) if isinstance(net, dict) else None
            if value not in (None, False, {}, "") and not (key == "driver" and value == "bridge"):
                raise UsageError(f"{source}: networks.{name}.{key}: not supported by the emulator (every run gets "
                                 f"its own bridge network); hint: {HINT}")
    for name, vol in (doc.get("volumes") or {}).items() if isinstance(doc.get("volumes"), dict) else []:
        if isinstance(vol, dict):
            for key in ("driver", "driver_opts", "external"):
                if vol.get(key) not in (None, False, "local", {}) or (key == "driver_opts" and vol.get(key)):
                    raise UsageError(f"{source}: volumes.{name}.{key}: not supported by the emulator (a named volume "
                                     "is a folder under the state folder; driver options can bind any host path); "
                                     f"hint: {HINT}")
    for name, svc in (doc.get("services") or {}).items() if isinstance(doc.get("services"), dict) else []:
        if not isinstance(svc, dict):
            continue
        for key, why in _SERVICE_REFUSED.items():
            if svc.get(key) not in (None, [], {}, ""):
                raise UsageError(f"{source}: services.{name}.{key}: not supported by the emulator ({why}); "
                                 f"hint: {HINT}")
        _compose_service(doc, name, svc, f"{source}: services.{name}")
        for key in _SERVICE_NOTED:
            if svc.get(key) not in (None, [], {}, ""):
                notes.append(f"{source}: services.{name}.{key} is not applied by the emulator")
    return notes


def _compose_service(doc: dict, name: str, svc: dict, where: str) -> None:
    """Counts, dependencies and mount options a compose service names that the emulator would
    otherwise run without."""
    deploy = svc["deploy"] if isinstance(svc.get("deploy"), dict) else {}
    for path, count in (("scale", svc.get("scale")), ("deploy.replicas", deploy.get("replicas"))):
        if count not in (None, 1):
            raise UsageError(f"{where}.{path}: {count!r} containers of one service are not run by the emulator "
                             "(one container per service; `docker compose` would start that many); hint: write one "
                             "service per replica, as `trainspec compile --target compose` does")
    deps = svc.get("depends_on")
    for dep in (deps if isinstance(deps, (dict, list)) else []):
        if not isinstance(dep, str) or dep not in (doc.get("services") or {}):
            raise UsageError(f"{where}.depends_on: {dep!r} is not a service of this file (docker compose refuses "
                             "it too)")
    for i, vol in enumerate(svc.get("volumes") or [] if isinstance(svc.get("volumes"), list) else []):
        vwhere = f"{where}.volumes[{i}]"
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
            raise UsageError(f"{vwhere}: is {type(vol).__name__}; expected a string or a mapping")
        if not isinstance(target, str) or not target.startswith("/"):
            raise UsageError(f"{vwhere}: target {target!r} is not an absolute path in the container")
        if propagation not in _PRIVATE:
            raise UsageError(f"{vwhere}: bind propagation {propagation!r} is not supported by the emulator (its "
                             f"mounts never propagate between the host and a container); hint: {HINT}")
        if subpath not in (None, ""):
            raise UsageError(f"{vwhere}: volume.subpath is not supported by the emulator (the whole volume would be "
                             f"mounted); hint: {HINT}")
