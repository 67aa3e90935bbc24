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
from trainspec.compiler.frameworks import MPI_WORKER_COMMAND, env_role
from trainspec.compiler.plan import EnvVar, JobPlan, RolePlan, user_var
from trainspec.compiler.templating import TemplateError, Templates, has_template

TOPOLOGY_HINT = ("read the index at runtime instead: $TRAINSPEC_INDEX (every target sets it), "
                 "TF_CONFIG's task.index, or RANK / DMLC_WORKER_ID")


class _Job:
    def __init__(self, name: str, namespace: str):
        self.name = name
        self.namespace = namespace


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

    def of(self, index: int) -> Rendered:
        return self.per_replica[0] if self.uniform else self.per_replica[index]


def _sources(plan: JobPlan, role: RolePlan):
    """(command, path), (args, path), [(name, value, path)]: the role's templates as written."""
    spec = plan.spec
    rspec = spec.role(role.name)
    rpath = ("spec", "roles", role.name)
    if plan.framework == "mpi" and role.name == "worker":
        command = (rspec.command or MPI_WORKER_COMMAND, rpath + ("command",))
        args = (rspec.args, rpath + ("args",))
    else:
        command = (rspec.command, rpath + ("command",)) if rspec.command is not None else \
            (spec.command, ("spec", "command"))
        args = (rspec.args, rpath + ("args",)) if rspec.args is not None else (spec.args, ("spec", "args"))
    merged: dict[str, tuple[object, tuple]] = {}
    for name, value in spec.env:
        merged[name] = (value, ("spec", "env", name))
    for name, value in rspec.env:
        merged[name] = (value, rpath + ("env", name))
    env = [(name, value, path) for name, (value, path) in merged.items()]
    return command, args, env


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

    job = _Job(plan.name, plan.namespace)

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
            return RoleRender(False, rendered, _first_difference(first, other, command_path, args_path, env))
    return RoleRender(True, (first,))


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


def per_replica_error(plan: JobPlan, role: RolePlan, path: tuple, target: str, why: str) -> SpecErrors:
    """A SpecErrors for a template that renders differently per replica, at its position in the spec."""
    message = (f"renders differently for each {role.name} replica (it uses {{{{ index }}}}), "
               f"but {why}")
    expected = "the same text for every replica of a role"
    sink = ErrorSink(plan.spec.source)
    try:  # find the line and column again; the plan does not keep positions
        from trainspec.compiler.loader import load_file

        for doc in load_file(plan.spec.source):
            meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
            if isinstance(meta, dict) and meta.get("name") == plan.name:
                sink = ErrorSink(plan.spec.source, doc.positions, doc.key_positions)
                break
    except Exception:  # noqa: BLE001 - positions are a courtesy; 1:1 is acceptable
        pass
    sink.add(path, f"target {target}: {message}", expected, TOPOLOGY_HINT)
    return SpecErrors(sink.errors)


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
