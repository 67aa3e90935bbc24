"""Pods the emulator refuses before running anything (issue 11 item 2)."""

from __future__ import annotations


def refuse_api_rejects(loader, pod: dict, where: str) -> None:
    """What the API server would reject in a pod (duplicate volume, container or port names, duplicate
    mount paths), and native sidecars, which the emulator does not run beside the main container."""
    names = [v.get("name") for v in pod.get("volumes") or []]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise loader.fail(pod, ("volumes",), f"volume name(s) {', '.join(map(str, twice))} used twice; the API "
                          "server rejects it", label=where)
    inits = pod.get("initContainers") or []
    containers = inits + (pod.get("containers") or [])
    cnames = [c.get("name") for c in containers]
    twice = sorted({n for n in cnames if cnames.count(n) > 1})
    if twice:
        raise loader.fail(pod, ("containers",), f"container name(s) {', '.join(map(str, twice))} used twice",
                          label=where)
    for c in containers:
        mounts = [m.get("mountPath") for m in c.get("volumeMounts") or []]
        ports = [p.get("name") for p in c.get("ports") or [] if p.get("name")]
        for what, values in (("mount path", mounts), ("port name", ports)):
            dup = sorted({v for v in values if values.count(v) > 1})
            if dup:
                raise loader.fail(c, ("volumeMounts" if what == "mount path" else "ports",),
                                  f"{what} {', '.join(map(str, dup))} used twice",
                                  label=f"{where} container {c.get('name')}")
        long = [p for p in ports if len(str(p)) > 15]
        if long:
            raise loader.fail(c, ("ports",), f"port name {long[0]!r} is over 15 characters",
                              label=f"{where} container {c.get('name')}")
    sidecars = [c.get("name") for c in inits if c.get("restartPolicy") == "Always"]
    if sidecars:
        raise loader.fail(pod, ("initContainers",), f"native sidecar(s) {', '.join(map(str, sidecars))} "
                          "(initContainers with restartPolicy Always): the emulator runs init containers to "
                          "completion only", label=where)
