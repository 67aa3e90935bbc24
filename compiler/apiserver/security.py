"""Security contexts: kubernetes pkg/apis/core/validation ValidateSecurityContext (a container's) and
validatePodSpecSecurityContext (the pod's): ids, capabilities, seccomp and AppArmor profiles, Windows
options, sysctls."""

from __future__ import annotations

import re

from ..kube_rules import subdomain_problem
from .findings import Sink
from .values import is_int


def check_security_context(s: Sink, sc, path: tuple) -> None:
    """core ValidateSecurityContext."""
    if not isinstance(sc, dict):
        return
    for field in ("runAsUser", "runAsGroup"):
        value = sc.get(field)
        if value is not None and (not is_int(value) or not 0 <= value <= 2**31 - 1):
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


def check_pod_security_context(s: Sink, sc, path: tuple) -> None:
    """core validatePodSpecSecurityContext."""
    if not isinstance(sc, dict):
        return
    for field in ("runAsUser", "runAsGroup", "fsGroup"):
        value = sc.get(field)
        if value is not None and (not is_int(value) or not 0 <= value <= 2**31 - 1):
            s.invalid(path + (field,), value, "must be between 0 and 2147483647, inclusive")
    for i, group in enumerate(sc.get("supplementalGroups") or []):
        if not is_int(group) or not 0 <= group <= 2**31 - 1:
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


SYSCTL = re.compile(r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$")
