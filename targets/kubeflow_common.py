"""Shared by the `kubeflow` and `volcano` targets: per-role rendering of the spec's templates.

Both operators take one pod template per replica type (Kubeflow) or task (Volcano),
and create the pods themselves, so the templates must be the same for every
replica of a role.  Per-replica values reach the program at runtime instead:
`TRAINSPEC_INDEX` through the downward API, and the operator's own variables.

The spec's `{{ hosts.<role> }}` must name the hosts the operator really creates,
which differ by target (Kubeflow: the per-replica Services `<job>-<rt>-<i>`;
mpi-operator and Volcano: `<pod>.<job>` through the job's headless Service), so
the templates are rendered here again with the target's host names.  The plan's
rendering (k8s host names) is used by the `k8s` target only.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainspec.compiler.errors import ErrorSink, SpecError, SpecErrors
from trainspec.compiler.frameworks import env_role
from trainspec.compiler.planner import JobContext, role_sources
from trainspec.compiler.plan import EnvVar, JobPlan, RolePlan, user_var
from trainspec.compiler.templating import TemplateError, Templates, has_template

TOPOLOGY_HINT = ("read the index at runtime instead: $TRAINSPEC_INDEX (every target sets it), "
                 "TF_CONFIG's task.index, or RANK / DMLC_WORKER_ID")


@dataclass(frozen=True)
class Rendered:
    """What one replica's templates rendered to: command, args and the user's env (in order)."""

    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    env: tuple[EnvVar, ...]


@dataclass(frozen=True)
class RoleRender:
    """The rendering of one role: `uniform` when every replica got the same values.

    `per_replica[i]` is replica i's rendering; when uniform it holds one entry
    shared by all replicas.  `varying` names the first field path that differs.
    """

    uniform: bool
    per_replica: tuple[Rendered, ...]
    varying: tuple | None = None
    symbolic: Rendered | None = None  # rendered with index = INDEX_TOKEN (see runtime_form)
    paths: tuple = ()  # (command path, args path, [env paths])

    def of(self, index: int) -> Rendered:
        return self.per_replica[0] if self.uniform else self.per_replica[index]


def _sources(plan: JobPlan, role: RolePlan):
    """(command, path), (args, path), [(name, value, path)]: the role's templates as written."""
    sources = role_sources(plan.spec, plan.spec.role(role.name))
    return (sources.command, sources.command_path), (sources.args, sources.args_path), sources.env


def _uses_index(templates: Templates, texts) -> bool:
    from jinja2 import meta

    for text in texts:
        if has_template(text):
            ast = templates._environment().parse(text)
            if "index" in meta.find_undeclared_variables(ast):
                return True
    return False


def render_role(plan: JobPlan, role: RolePlan, hosts: dict[str, list[str]],
                templates: Templates | None = None) -> RoleRender:
    """Render the role's command, args and env with the target's `hosts` (role -> [host:port])."""
    templates = templates or Templates()
    (command, command_path), (args, args_path), env = _sources(plan, role)
    texts = list(command or ()) + list(args or ()) + [v for _, v, _ in env if isinstance(v, str)]
    if not any(has_template(t) for t in texts):
        static = Rendered(command, args, tuple(user_var(name, value) for name, value, _ in env))
        return RoleRender(True, (static,))

    job = JobContext(plan.name, plan.namespace)

    def render(index: int) -> Rendered:
        context = {"job": job, "role": role.name, "index": index, "replicas": role.count,
                   "hosts": hosts, "port": role.port}

        def one(text, path):
            try:
                return templates.render(text, context)
            except TemplateError as exc:  # the planner reported it already; keep the text
                raise SpecErrors([SpecError(plan.spec.source, 1, 1, _dotted(path), exc.message, "", exc.hint)])

        r_command = None if command is None else tuple(one(s, command_path + (i,)) for i, s in enumerate(command))
        r_args = None if args is None else tuple(one(s, args_path + (i,)) for i, s in enumerate(args))
        r_env = tuple(user_var(name, one(value, path) if isinstance(value, str) else value)
                      for name, value, path in env)
        return Rendered(r_command, r_args, r_env)

    if role.count <= 1 or not _uses_index(templates, texts):
        return RoleRender(True, (render(0),))
    rendered = tuple(render(i) for i in range(role.count))
    first = rendered[0]
    for other in rendered[1:]:
        if other != first:
            try:
                symbolic = render(INDEX_TOKEN)
            except SpecErrors:  # e.g. {{ index + 1 }}: arithmetic on the index
                symbolic = None
            return RoleRender(False, rendered, _first_difference(first, other, command_path, args_path, env),
                              symbolic, (command_path, args_path, tuple(path for _, _, path in env)))
    return RoleRender(True, (first,))


# --- per-replica text through the runtime index (Kubeflow) ---------------------------------

INDEX_TOKEN = "\ue000trainspec-index\ue000"
INDEX_REF = "$(TRAINSPEC_INDEX)"


def _k8s_text(symbolic: str, actual: list[str]) -> str | None:
    """`symbolic` as kubelet text with `$(TRAINSPEC_INDEX)` where the index was, or None.

    The result is checked against every replica's own rendering with the kubelet's
    expansion rules (compiler.plan.expand_references): it is returned only when the
    program of replica i would see exactly the text the spec renders for index i.
    """
    from trainspec.compiler.plan import expand_references

    from .common import escape_k8s

    parts = symbolic.split(INDEX_TOKEN)
    # a `$` just before the reference must be escaped too: escape each part as if "(" followed it
    escaped = [escape_k8s(part + "(")[:-1] for part in parts[:-1]] + [escape_k8s(parts[-1])]
    text = INDEX_REF.join(escaped)
    for i, expected in enumerate(actual):
        if expand_references(text, {"TRAINSPEC_INDEX": str(i)}) != expected:
            return None
    return text


def runtime_form(role_render: RoleRender):
    """(command, args, env entries) for one pod template serving every replica, or (None, path).

    Strings come back already escaped for the kubelet; a per-replica string uses
    `$(TRAINSPEC_INDEX)`, which the kubelet expands from the env var defined first
    in the container (command, args and later env values may reference it).
    Returns (None, path of the first field that cannot be expressed) on failure.
    """
    from .common import env_entry

    sym = role_render.symbolic
    reps = role_render.per_replica
    command_path, args_path, env_paths = role_render.paths
    if sym is None:
        return None, role_render.varying

    def items(name, path):
        values = getattr(sym, name)
        if values is None:
            return None, None
        out = []
        for i, text in enumerate(values):
            k8s = _k8s_text(text, [getattr(r, name)[i] for r in reps])
            if k8s is None:
                return None, path + (i,)
            out.append(k8s)
        return out, None

    command, bad = items("command", command_path)
    if bad:
        return None, bad
    args, bad = items("args", args_path)
    if bad:
        return None, bad
    env = []
    for j, var in enumerate(sym.env):
        if var.value is None:
            env.append(env_entry(var, ""))
            continue
        k8s = _k8s_text(var.value, [r.env[j].value for r in reps])
        if k8s is None:
            return None, env_paths[j]
        env.append({"name": var.name, "value": k8s})
    return (command, args, env), None


def _first_difference(a: Rendered, b: Rendered, command_path, args_path, env) -> tuple:
    for items_a, items_b, path in ((a.command, b.command, command_path), (a.args, b.args, args_path)):
        for i, (x, y) in enumerate(zip(items_a or (), items_b or ())):
            if x != y:
                return path + (i,)
    for (var_a, var_b, (_, _, path)) in zip(a.env, b.env, env):
        if var_a != var_b:
            return path
    return ("spec",)


def _dotted(path: tuple) -> str:
    from trainspec.compiler.errors import dotted

    return dotted(path)


def spec_error(plan: JobPlan, path: tuple, message: str, expected: str = "", hint: str = "") -> SpecErrors:
    """A SpecErrors at `path`, with the line and column found again in the spec file.

    The plan does not keep positions; the file is read again (only on this error
    path), and 1:1 is used when that is not possible (e.g. Jsonnet needing options).
    """
    sink = ErrorSink(plan.spec.source)
    try:
        from trainspec.compiler.loader import load_file

        for doc in load_file(plan.spec.source):
            meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
            if isinstance(meta, dict) and meta.get("name") == plan.name:
                sink = ErrorSink(plan.spec.source, doc.positions, doc.key_positions)
                break
    except Exception:  # noqa: BLE001 - positions are a courtesy
        pass
    sink.add(path, message, expected, hint)
    return SpecErrors(sink.errors)


def per_replica_error(plan: JobPlan, role: RolePlan, path: tuple, target: str, why: str) -> SpecErrors:
    """A SpecErrors for a template that renders differently per replica, at its position in the spec."""
    message = (f"target {target}: renders differently for each {role.name} replica (it uses {{{{ index }}}}), "
               f"but {why}")
    return spec_error(plan, path, message, "the same text for every replica of a role", TOPOLOGY_HINT)


def topology_data(plan: JobPlan, hosts: dict[str, list[str]]) -> dict[str, str]:
    """TRAINSPEC_HOSTS_<ROLE> for each role, comma-separated host:port."""
    return {f"TRAINSPEC_HOSTS_{env_role(role.name)}": ",".join(hosts[role.name]) for role in plan.roles}


def base_env(plan: JobPlan, role: RolePlan, index_entry: dict, topology_name: str) -> list[dict]:
    """TRAINSPEC_JOB / ROLE / INDEX / NUM_<ROLE> / HOSTS_<ROLE>, in the plan's order."""
    env = [{"name": "TRAINSPEC_JOB", "value": plan.name},
           {"name": "TRAINSPEC_ROLE", "value": role.name},
           {"name": "TRAINSPEC_INDEX", **index_entry}]
    for other in plan.roles:
        key = f"TRAINSPEC_HOSTS_{env_role(other.name)}"
        env.append({"name": f"TRAINSPEC_NUM_{env_role(other.name)}", "value": str(other.count)})
        env.append({"name": key, "valueFrom": {"configMapKeyRef": {"name": topology_name, "key": key}}})
    return env


def field_ref(path: str) -> dict:
    return {"valueFrom": {"fieldRef": {"fieldPath": path}}}


def role_labels(plan: JobPlan, role: RolePlan) -> dict[str, str]:
    """Pod-template labels: one template serves every replica, so no trainspec.dev/index."""
    from . import common

    labels = common.job_labels(plan, role.name)
    labels["trainspec.dev/role"] = role.name
    return labels


def role_container(plan: JobPlan, role: RolePlan, env: list[dict], values: Rendered, name: str | None = None) -> dict:
    """The role's training container (common.main_container) with the target's rendering."""
    from trainspec.compiler.plan import Replica

    from . import common

    stub = Replica(role=role.name, index=0, name="", host="", port=role.port,
                   command=values.command, args=values.args, env=())
    return common.main_container(plan, role, stub, env, name=name)
