"""The spec's `{{ }}` templates per naming scheme, and whether one pod template serves a role.

Operators (Kubeflow, Volcano, JobSet) create a role's pods from one template, so
the text must be the same for every replica; per-replica values then reach the
program at runtime: `TRAINSPEC_INDEX` through the downward API, which the
kubelet expands in `$(TRAINSPEC_INDEX)`.  `render_role` renders a role with one
scheme's host names and, when the text differs per replica, finds that shared
form (checked replica by replica with the kubelet's own expansion rules) or the
path of the first field that has none.  `parse_parts` describes a template as
literal text and topology names (what the Helm chart recomputes from values).
"""

from __future__ import annotations

from collections.abc import Callable

from .kube import escape_references, expand_references
from .plan import EnvVar, HostList, Rendered, RoleRender, RoleSources, Text, TopologyVar, user_var
from .templating import EXPRESSION_KEY, TemplateError, Templates

INDEX_TOKEN = "\ue000trainspec-index\ue000"
INDEX_REF = "$(TRAINSPEC_INDEX)"
TOPOLOGY_VARS = ("index", "replicas", "port")

# (path, message, hint, where) of a template that failed to render; `where` is the position
# key of the failing `{{ }}` (path + (EXPRESSION_KEY, i), see loader) or the path itself.
OnError = Callable[[tuple, str, str, tuple], None]


class JobContext:
    """The `job` object templates see: `job.name`, `job.namespace`, `job.replicas` (all roles' replicas)."""

    def __init__(self, name: str, namespace: str, replicas: int = 0):
        self.name = name
        self.namespace = namespace
        self.replicas = replicas


class _Failed(Exception):
    pass


def render_role(sources: RoleSources, role: str, count: int, port: int, job: JobContext,
                hosts: dict[str, list[str]], templates: Templates, on_error: OnError) -> RoleRender | None:
    """The role rendered with `hosts` (role -> [host:port]); None (after on_error) when a template fails."""
    if not sources.templated:
        static = Rendered(_plain(sources.command), _plain(sources.args),
                          tuple(user_var(name, v.source if isinstance(v, Text) else v) for name, v in sources.env))
        return RoleRender(True, (static,))

    def render(index, failures: dict | None = None) -> Rendered:
        """One replica's texts; with `failures`, a failing text is recorded there (its first failure
        per field) and rendering goes on, so every broken template is reported at once."""
        context = {"job": job, "role": role, "index": index, "replicas": count, "hosts": hosts, "port": port}

        def one(text: Text) -> str:
            try:
                return templates.render(text.source, context)
            except TemplateError as exc:
                if failures is None:
                    raise _Failed(text.path, exc, text.source) from None
                failures.setdefault(text.path, (exc, text.source))
                return ""

        return Rendered(None if sources.command is None else tuple(one(t) for t in sources.command),
                        None if sources.args is None else tuple(one(t) for t in sources.args),
                        tuple(user_var(name, one(v) if isinstance(v, Text) else v) for name, v in sources.env))

    failures: dict[tuple, tuple[TemplateError, str]] = {}
    if count <= 1 or not _uses_index(sources):
        rendered: tuple[Rendered, ...] = (render(0, failures),)
    else:
        rendered = tuple(render(i, failures) for i in range(count))
    if failures:
        for path, (exc, source) in failures.items():
            index = exc.expression(source)
            on_error(path, exc.message, exc.hint, path if index is None else path + (EXPRESSION_KEY, index))
        return None
    if len(rendered) == 1:
        return RoleRender(True, rendered)
    if all(other == rendered[0] for other in rendered[1:]):
        return RoleRender(True, (rendered[0],))
    try:
        symbolic = render(INDEX_TOKEN)
    except _Failed:  # e.g. {{ index + 1 }}: arithmetic on the index
        return RoleRender(False, rendered, None, _first_difference(sources, rendered[0], rendered[1]))
    shared, bad = _shared_form(sources, symbolic, rendered)
    return RoleRender(False, rendered, shared, bad)


def _plain(items: tuple[Text, ...] | None) -> tuple[str, ...] | None:
    return None if items is None else tuple(t.source for t in items)


def _uses_index(sources: RoleSources) -> bool:
    texts = list(sources.command or ()) + list(sources.args or ()) + [v for _, v in sources.env if isinstance(v, Text)]
    return any(t.templated and (t.names is None or "index" in t.names) for t in texts)


def _kubelet_text(symbolic: str, actual: list[str]) -> str | None:
    """`symbolic` as kubelet text with `$(TRAINSPEC_INDEX)` where the index was, or None.

    Returned only when the kubelet's expansion gives replica i exactly the text
    the spec renders for index i.
    """
    parts = symbolic.split(INDEX_TOKEN)
    # a `$` just before the reference must be escaped too: escape each part as if "(" followed it
    escaped = [escape_references(part + "(")[:-1] for part in parts[:-1]] + [escape_references(parts[-1])]
    text = INDEX_REF.join(escaped)
    for i, expected in enumerate(actual):
        if expand_references(text, {"TRAINSPEC_INDEX": str(i)}) != expected:
            return None
    return text


def _shared_form(sources: RoleSources, sym: Rendered, reps: tuple[Rendered, ...]):
    """(shared Rendered, None), or (None, path of the first field with no shared form)."""
    lists: dict[str, tuple[str, ...] | None] = {}
    for name in ("command", "args"):
        values = getattr(sym, name)
        if values is None:
            lists[name] = None
            continue
        out = []
        for i, text in enumerate(values):
            k8s = _kubelet_text(text, [getattr(r, name)[i] for r in reps])
            if k8s is None:
                return None, getattr(sources, name)[i].path
            out.append(k8s)
        lists[name] = tuple(out)
    env = []
    for j, var in enumerate(sym.env):
        if var.value is None:
            env.append(var)
            continue
        k8s = _kubelet_text(var.value, [r.env[j].value or "" for r in reps])
        if k8s is None:
            value = sources.env[j][1]
            return None, value.path if isinstance(value, Text) else ("spec",)
        env.append(EnvVar(var.name, expand=k8s))
    return Rendered(lists["command"], lists["args"], tuple(env)), None


def _first_difference(sources: RoleSources, a: Rendered, b: Rendered) -> tuple:
    for name in ("command", "args"):
        for i, (x, y) in enumerate(zip(getattr(a, name) or (), getattr(b, name) or ())):
            if x != y:
                return getattr(sources, name)[i].path
    for (var_a, var_b, (_, value)) in zip(a.env, b.env, sources.env):
        if var_a != var_b and isinstance(value, Text):
            return value.path
    return ("spec",)


# --- templates as parts -----------------------------------------------------------------------

def describe(templates: Templates, source: str, path: tuple, role: str, roles: tuple[str, ...]) -> Text:
    """A Text for `source`: for a template, the names it reads and (when simple) its parts."""
    from .templating import has_template

    if not has_template(source):
        return Text(source, path)
    try:
        tree = templates._environment().parse(source)
    except Exception:  # noqa: BLE001 - a syntax error is reported when it is rendered
        return Text(source, path, True)
    from jinja2 import meta

    names = frozenset(meta.find_undeclared_variables(tree))
    return Text(source, path, True, _parts(tree, role, roles), names)


def _parts(tree, role: str, roles: tuple[str, ...]) -> tuple | None:
    from jinja2 import nodes

    parts: list = []

    def add(part) -> None:
        if isinstance(part, str) and parts and isinstance(parts[-1], str):
            parts[-1] += part
        elif part != "":
            parts.append(part)

    for node in tree.body:
        if not isinstance(node, nodes.Output):
            return None
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                add(child.data)
                continue
            part = _expr(child, role, roles)
            if part is None:
                return None
            add(part)
    return tuple(parts) or ("",)


def _expr(node, role: str, roles: tuple[str, ...]):
    from jinja2 import nodes

    if isinstance(node, nodes.Const) and isinstance(node.value, str):
        return node.value
    if isinstance(node, nodes.Const) and type(node.value) is int:
        return str(node.value)
    if isinstance(node, nodes.Name) and node.ctx == "load":
        if node.name == "role":
            return role  # constant for the role
        if node.name in TOPOLOGY_VARS:
            return TopologyVar(node.name)
        return None
    if (isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) and node.node.name == "job"
            and node.attr in ("name", "namespace")):  # not job.replicas: the chart pins it (byIndex)
        return TopologyVar(f"job.{node.attr}")
    if (isinstance(node, nodes.Filter) and node.name == "join" and not node.kwargs and node.dyn_args is None
            and node.dyn_kwargs is None and isinstance(node.node, nodes.Getattr)
            and isinstance(node.node.node, nodes.Name) and node.node.node.name == "hosts"
            and node.node.attr in roles and len(node.args) <= 1
            and all(isinstance(a, nodes.Const) and isinstance(a.value, str) for a in node.args)):
        return HostList(node.node.attr, node.args[0].value if node.args else "")  # type: ignore[attr-defined]
    return None
