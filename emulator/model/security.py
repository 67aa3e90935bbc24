"""Security-relevant pod and service fields: honoured, or refused with a clear message.

Never silently dropped: a job that asks to run as uid 1000 on a read-only root must
not run as root on a writable one, and a job that asks for the host's network,
PID namespace or extra capabilities is refused rather than run without them (or
with them: the emulator never hands a container the host).

Honoured (Kubernetes → Docker): runAsUser/runAsGroup → user, supplementalGroups and
fsGroup → group_add, readOnlyRootFilesystem → read_only, allowPrivilegeEscalation
false → no-new-privileges, capabilities.drop → cap_drop, runAsNonRoot (checked
against the user, and the image's user before start), seccomp RuntimeDefault
(Docker's default). Compose: user, read_only, group_add, cap_drop,
security_opt no-new-privileges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import FieldError


@dataclass
class Security:
    user: str | None = None            # Docker `user`: "uid", "uid:gid" or a name (compose)
    read_only_root: bool = False
    no_new_privileges: bool = False
    cap_drop: list[str] = field(default_factory=list)
    group_add: list[str] = field(default_factory=list)
    run_as_non_root: bool = False


_REFUSE_HINT = "the emulator runs every replica as an ordinary container; remove the field to run it locally"
# Accepted with no effect: they only restrict further, or do not apply to one container on Docker.
_IGNORED_POD = {"fsGroupChangePolicy", "windowsOptions", "supplementalGroupsPolicy", "seLinuxChangePolicy"}
_IGNORED_CONTAINER = {"windowsOptions"}


def _refuse(where: str, node: dict, field: tuple, what: str) -> FieldError:
    """`what`: the value refused, said after the field's path ("true", "['SYS_ADMIN']", "the field")."""
    return FieldError(f"{what} is not supported by the emulator (it would either be dropped, or hand the container "
                      "the host)", where=where, node=node, field=field, hint=_REFUSE_HINT)


def _mapping(owner: dict, key: str, where: str) -> dict:
    value = owner.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FieldError(f"is {type(value).__name__}", where=where, node=owner, field=(key,), expected="a mapping")
    return value


def _id(value: Any, where: str, node: dict, field: tuple) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2**31 - 1:
        raise FieldError(f"{value!r} is not a user or group id", where=where, node=node, field=field,
                         expected="an integer 0..2147483647")
    return value


def _profile(sc: dict, key: str, where: str) -> None:
    """seccompProfile / appArmorProfile: only the runtime's default is what Docker gives."""
    value = sc.get(key)
    kind = (value or {}).get("type") if isinstance(value, dict) else None
    if kind not in (None, "RuntimeDefault"):
        raise _refuse(where, sc, (key, "type"), str(kind))


def k8s_security(pod: dict, container: dict, where: str) -> Security:
    """`pod`: the pod's spec; errors name the field under it or under `container`."""
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key):
            raise _refuse(where, pod, (key,), "true")
    if pod.get("hostUsers") is False:
        raise _refuse(where, pod, ("hostUsers",), "false (a user namespace)")
    psc = _mapping(pod, "securityContext", where)
    csc = _mapping(container, "securityContext", where)
    for sc in (psc, csc):
        for key in ("runAsUser", "runAsGroup", "fsGroup"):
            if key in sc:
                _id(sc[key], where, sc, (key,))
        for i, g in enumerate(sc.get("supplementalGroups") or []):
            _id(g, where, sc, ("supplementalGroups", i))
    if not isinstance(csc.get("capabilities") or {}, dict):
        raise FieldError(f"is {type(csc['capabilities']).__name__}", where=where, node=csc, field=("capabilities",),
                         expected="a mapping")
    for key in psc:
        if key in _IGNORED_POD or key in ("runAsUser", "runAsGroup", "runAsNonRoot", "supplementalGroups",
                                          "fsGroup", "seccompProfile", "appArmorProfile"):
            continue
        raise _refuse(where, psc, (key,), "the field")
    for key in csc:
        if key in _IGNORED_CONTAINER or key in ("runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem",
                                                "allowPrivilegeEscalation", "capabilities", "seccompProfile",
                                                "appArmorProfile", "privileged", "procMount"):
            continue
        raise _refuse(where, csc, (key,), "the field")
    if csc.get("privileged"):
        raise _refuse(where, csc, ("privileged",), "true")
    if csc.get("procMount") not in (None, "Default"):
        raise _refuse(where, csc, ("procMount",), str(csc["procMount"]))
    caps = csc.get("capabilities") or {}
    if caps.get("add"):
        raise _refuse(where, caps, ("add",), str(list(caps["add"])))
    for sc in (psc, csc):
        _profile(sc, "seccompProfile", where)
        _profile(sc, "appArmorProfile", where)
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    gid = csc.get("runAsGroup", psc.get("runAsGroup"))
    out = Security()
    if uid is not None:
        out.user = f"{int(uid)}" + (f":{int(gid)}" if gid is not None else "")
    elif gid is not None:
        raise FieldError("runAsGroup without runAsUser is not supported by the emulator (Docker sets a group only "
                         "with a user)", where=where, node=csc if "runAsGroup" in csc else psc, field=("runAsGroup",),
                         hint="set runAsUser too")
    out.read_only_root = bool(csc.get("readOnlyRootFilesystem"))
    out.no_new_privileges = csc.get("allowPrivilegeEscalation") is False
    out.cap_drop = [str(c) for c in caps.get("drop") or []]
    groups = [str(int(g)) for g in psc.get("supplementalGroups") or []]
    if psc.get("fsGroup") is not None:
        groups.append(str(int(psc["fsGroup"])))
    out.group_add = list(dict.fromkeys(groups))
    out.run_as_non_root = bool(csc.get("runAsNonRoot", psc.get("runAsNonRoot")))
    if out.run_as_non_root and uid is not None and int(uid) == 0:
        raise FieldError("runAsNonRoot is true but runAsUser is 0 (the kubelet refuses to start it)", where=where,
                         node=csc if "runAsUser" in csc else psc, field=("runAsUser",))
    return out


# Compose service keys that give a container (part of) the host, or change its isolation.
_COMPOSE_REFUSED = ("privileged", "cap_add", "devices", "device_cgroup_rules", "network_mode", "pid", "ipc",
                    "userns_mode", "cgroup_parent", "cgroup", "sysctls", "volumes_from", "runtime", "isolation",
                    "uts")


def compose_security(svc: dict, where: str) -> Security:
    for key in _COMPOSE_REFUSED:
        if key in svc and svc[key] not in (None, False, [], {}):
            raise _refuse(where, svc, (key,), repr(svc[key]))
    opts = svc.get("security_opt") or []
    nnp = False
    for i, opt in enumerate(opts):
        if str(opt).replace("=", ":") in ("no-new-privileges", "no-new-privileges:true"):
            nnp = True
        else:
            raise _refuse(where, svc, ("security_opt", i), repr(opt))
    return Security(user=str(svc["user"]) if svc.get("user") not in (None, "") else None,
                    read_only_root=bool(svc.get("read_only")), no_new_privileges=nnp,
                    cap_drop=[str(c) for c in svc.get("cap_drop") or []],
                    group_add=[str(g) for g in svc.get("group_add") or []])
