"""The API server's checks on the objects a target writes, with each refusal put back in the spec.

Every target's objects pass through `checked` as their last step (common.patched calls it after the
spec's patches; the helm chart's default render is the k8s objects, checked as the helm target's):
compiler/apiserver validates them as the API server would, and a refusal becomes a SpecError at
- the patch op that wrote the field (its line and column), when a patch wrote it or one of its parents;
- otherwise the spec field that fills it: a container's env entry -> that variable, its resources,
  probes, ports ... -> the role's (or the job's) field; anything else -> the role, or `spec`.
"""

from __future__ import annotations

from trainspec.compiler.errors import SpecError, SpecErrors
from trainspec.compiler.plan import JobPlan

ROLE_LABEL = "trainspec.dev/role"
# a container field -> the spec field that fills it (a role's, else the job's)
CONTAINER_FIELDS = {"env": "env", "resources": "resources", "livenessProbe": "livenessProbe",
                    "readinessProbe": "readinessProbe", "startupProbe": "startupProbe", "lifecycle": "lifecycle",
                    "securityContext": "securityContext", "volumeMounts": "volumes", "image": "image",
                    "command": "command", "args": "args", "workingDir": "workingDir", "ports": "port",
                    "name": "containerName"}
POD_FIELDS = {"volumes": "volumes", "tolerations": "tolerations", "affinity": "affinity",
              "nodeSelector": "nodeSelector", "securityContext": "podSecurityContext",
              "initContainers": "initContainers", "priorityClassName": "scheduling",
              "schedulerName": "scheduling", "imagePullSecrets": "imagePullSecrets"}


def checked(plan: JobPlan, target: str, docs, whole_file: bool = False):
    """`docs` unchanged when the API server would take every object; SpecErrors at the spec otherwise."""
    from trainspec.compiler.apiserver import check_objects

    objects = docs if isinstance(docs, list) else [docs]
    findings = check_objects(objects, plan.kube_version, _touched(plan, target, objects, whole_file))
    refused = [finding for finding in findings if not finding.warning]
    if refused:
        raise SpecErrors([_error(plan, target, objects, finding, whole_file) for finding in refused])
    _warn(plan, target, [_error(plan, target, objects, finding, whole_file) for finding in findings])
    return docs


_WARNED: set[str] = set()


def _warn(plan: JobPlan, target: str, warnings: list[SpecError]) -> None:
    """What the server takes but drops or cannot run, on stderr once each (as common.warn_dropped)."""
    import sys

    for warning in SpecErrors(warnings).errors if warnings else ():
        text = warning.format()
        if text not in _WARNED:
            _WARNED.add(text)
            print(f"trainspec: warning: {text}", file=sys.stderr)


def _touched(plan: JobPlan, target: str, objects: list, whole_file: bool) -> frozenset[int]:
    """The objects a patch may have written into: those its ops address (k8s), or the job object."""
    ops = plan.patches.get(target, ())
    if not ops:
        return frozenset()
    if not whole_file:
        return frozenset({len(objects) - 1})
    out = set()
    for op in ops:
        for key in ("path", "from"):
            first = _tokens(str(op.op.get(key) or "/"))[:1]
            if first and first[0].isdigit():
                out.add(int(first[0]))
            elif first:  # "/-" or a whole-list op: any object may be new
                return frozenset(range(len(objects)))
    return frozenset(out)


def _error(plan: JobPlan, target: str, objects: list, finding, whole_file: bool) -> SpecError:
    doc = objects[finding.doc]
    meta = doc.get("metadata") or {}
    what = f"{doc.get('kind')} {meta.get('name')}"
    message = f"target {target}: the API server {'takes' if finding.warning else 'refuses'} the {what}: " \
              f"{finding.message}"
    # a patch addresses the file's objects (k8s) or the job object, the last one
    pointer = ((finding.doc,) if whole_file else ()) + tuple(finding.path)
    op = _patch_op(plan, target, pointer) if whole_file or finding.doc == len(objects) - 1 else None
    if op is not None:
        return SpecError(plan.source, op.line, op.column, _dotted(op.path), message,
                         "a value the API server accepts", f"patch op '{op.op.get('op')} {op.op.get('path')}' "
                         "writes this field")
    path = spec_path(plan, doc, finding.path)
    line, column = plan.locator.position(path) if plan.locator is not None else (1, 1)
    return SpecError(plan.source, line, column, _dotted(path), message, "a value the API server accepts",
                     f"compile with --target {target} to see the object written")


def _patch_op(plan: JobPlan, target: str, pointer: tuple):
    """The last patch op whose path is the field, one of its parents or one of its children."""
    found = None
    for op in plan.patches.get(target, ()):
        for key in ("path", "from"):
            text = op.op.get(key)
            if isinstance(text, str) and text and _overlaps(_tokens(text), pointer):
                found = op
    return found


def _tokens(pointer: str) -> tuple:
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:])


def _overlaps(tokens: tuple, path: tuple) -> bool:
    for a, b in zip(tokens, path):
        if a == "-" and isinstance(b, int):
            continue
        if str(a) != str(b):
            return False
    return True


def spec_path(plan: JobPlan, doc: dict, path: tuple) -> tuple:
    """The spec field that fills `path` of `doc`: through the role of the pod template it is in."""
    role, container, after, pod_after = None, None, (), ()
    node = doc
    for i, key in enumerate(path):
        if isinstance(node, dict) and isinstance(node.get("metadata"), dict) and ROLE_LABEL in \
                (node["metadata"].get("labels") or {}):
            role = node["metadata"]["labels"][ROLE_LABEL]
        if key in ("containers", "initContainers") and isinstance(node, dict) and "containers" in node:
            pod_after = path[i:]
            if key == "containers" and i + 1 < len(path):
                container = node["containers"][path[i + 1]] if isinstance(path[i + 1], int) and \
                    path[i + 1] < len(node["containers"]) else None
                after = path[i + 2:]
        elif isinstance(node, dict) and "containers" in node and not pod_after:
            pod_after = path[i:]
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            break
    role_plan = plan.role(role) if role else None
    if role_plan is None and len(plan.roles) == 1:
        role_plan = plan.roles[0]
    if role_plan is None:
        return ("metadata", "name") if path[:2] == ("metadata", "name") else ("spec",)
    base = ("spec", "roles", role_plan.name)
    if container is not None and after:
        field = CONTAINER_FIELDS.get(after[0])
        if after[0] == "env" and len(after) > 1 and isinstance(after[1], int):
            entries = container.get("env") or []
            name = entries[after[1]].get("name") if after[1] < len(entries) else None
            if name and any(n == name for n, _ in role_plan.sources.env):
                return _present(plan, base + ("env", name), ("spec", "env", name), base)
        if field:
            return _present(plan, base + (field,), ("spec", field), base)
    elif pod_after:
        field = POD_FIELDS.get(pod_after[0])
        if field:
            return _present(plan, base + (field,), ("spec", field), base)
    return base


def _present(plan: JobPlan, *paths: tuple) -> tuple:
    """The first of `paths` written in the spec (the last one otherwise)."""
    locator = plan.locator
    if locator is not None:
        for path in paths:
            if locator.prefix + path in locator.positions:
                return path
    return paths[-1]


def _dotted(path: tuple) -> str:
    from trainspec.compiler.errors import dotted

    return dotted(path)
