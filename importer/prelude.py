"""The k8s target's rank prelude, recognised: a ranked worker's command as the spec wrote it.

The k8s target starts a PyTorch / XGBoost worker role's command with `/bin/sh -c <rank prelude>`
(targets/k8s/scheme.py), which sets RANK (and PET_NODE_RANK) as the index + 1 at start.  Importing that
output gives back the role's own command: the prelude is the target's, as the operator's env is, never
the user's command.  Only the prelude the target writes is recognised (scheme.strip_rank_prelude), so
any other `sh -c` command imports as written.
"""

from __future__ import annotations

from trainspec.targets.k8s.scheme import strip_rank_prelude


def without_rank_prelude(pod: dict, framework: str) -> dict:
    """`pod` (a pod template) with its main container's command without the rank prelude; `pod` itself when
    it has none (positions are looked up by path, so the copy keeps every error's line:column)."""
    spec = pod.get("spec") if isinstance(pod, dict) else None
    if not isinstance(spec, dict):
        return pod
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers or not isinstance(containers[0], dict):
        return pod
    command = strip_rank_prelude(containers[0].get("command"), framework)
    if command is None:
        return pod
    main = {**containers[0], "command": command}
    return {**pod, "spec": {**spec, "containers": [main, *containers[1:]]}}
