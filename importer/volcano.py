"""Volcano Jobs (batch.volcano.sh/v1alpha1) -> spec.

Field meanings: shared/reference/CONVENTIONS.md §2.  Task names become roles by
the framework plugin's arguments (`--master=mpimaster`), else by the task names
and commands (`mpirun` -> launcher, `sshd` -> worker); each choice is written as
a comment.  What the `volcano` target writes itself (the env/svc/ssh plugins,
`PodEvicted -> RestartJob`, `TaskCompleted -> CompleteJob` on the deciding role,
`PodFailed -> TerminateJob` for restartPolicy Never) is recognised and not
patched; every other policy, plugin argument and task field is.
"""

from __future__ import annotations

from trainspec.compiler.kinds.volcano import JOB
from trainspec.compiler.kube import PERMANENT_EXIT_CODES
from trainspec.targets.volcano.checks import volcano_node_rank_split

from .assemble import ROLE_ORDER, assemble, metadata
from .context import Context
from .pod import PodImporter, RoleDraft, pointer

PLUGIN_ROLES = {  # plugin -> (framework, {flag: role}); a flag not given names the task after itself
    "tensorflow": ("tensorflow", {"ps": "ps", "worker": "worker", "chief": "chief", "evaluator": "evaluator"}),
    "pytorch": ("pytorch", {"master": "master", "worker": "worker"}),
    "mpi": ("mpi", {"master": "launcher", "worker": "worker"}),
}
PLUGIN_DEFAULT_PORT = {"tensorflow": 2222, "pytorch": 23456, "mpi": 22}
JOB_FIELDS = ("schedulerName", "minAvailable", "queue", "priorityClassName", "maxRetry", "ttlSecondsAfterFinished")
# Kubeflow's ExitCode as the volcano target writes it: the permanent codes end the job, anything else restarts.
EXIT_CODE_POLICIES = [{"exitCode": code, "action": "TerminateJob"} for code in PERMANENT_EXIT_CODES] + [
    {"event": "PodFailed", "action": "RestartJob"}]


def import_job(ctx: Context, data: dict, docs: list | None = None, runtime_paths: list[str] | None = None) -> dict:
    if data.get("apiVersion") != JOB.api_version:
        raise ctx.fail(("apiVersion",), f"Volcano Job {data.get('apiVersion')!r} is not supported",
                       repr(JOB.api_version))
    spec: dict = data.get("spec") or {}
    tasks = spec.get("tasks")
    if not isinstance(tasks, list) or not tasks or not all(isinstance(t, dict) for t in tasks):
        raise ctx.fail(("spec", "tasks"), "a Volcano Job without tasks", "a list of tasks")
    plugins: dict = spec.get("plugins") or {}
    framework, roles_of, port = _roles(ctx, tasks, plugins)
    names = [roles_of[i] for i in range(len(tasks))]
    order = names if framework == "generic" else [n for n in ROLE_ORDER[framework] if n in names]
    counts = {roles_of[i]: int(t.get("replicas", 1)) for i, t in enumerate(tasks)}
    if volcano_node_rank_split(framework, False, counts):  # the target writes a task per replica
        first = 0
        for k, role in enumerate(order):
            ctx.task_copies[k] = list(range(first, first + counts[role]))
            first += counts[role]

    job: dict = {}
    sched: dict = {}
    total = sum(int(t.get("replicas", 1)) for t in tasks)
    for key, value in spec.items():
        path: tuple = ("spec", key)
        if key in ("tasks", "plugins", "policies"):
            continue
        if key == "schedulerName":
            if value != "volcano":
                sched["schedulerName"] = value
        elif key == "minAvailable":
            if value != total:
                sched["minAvailable"] = value
        elif key == "queue":
            if value != "default":  # Volcano's default queue
                sched[key] = value
        elif key == "priorityClassName":
            sched[key] = value
        elif key == "maxRetry":
            job["backoffLimit"] = value
        elif key == "ttlSecondsAfterFinished":
            job[key] = value
        else:
            ctx.unmap(path, "add", f"/spec/{key}", value)
    if sched:
        job["scheduling"] = sched
    _plugins(ctx, plugins, framework, port)

    job_policies = list(spec.get("policies") or [])
    job_exit_code = _exit_code(job_policies)
    if job_exit_code:
        job_policies = [p for p in job_policies if p not in EXIT_CODE_POLICIES]
        ctx.comment(("spec", "restartPolicy"), "the job's exit-code policies (1-127 terminate, others restart)")
    drafts: dict[str, RoleDraft] = {}
    deciders: list[str] = []
    bases: dict[str, str] = {}
    restart: dict[str, str | None] = {}
    replicas: dict[str, int] = {}
    accelerator = None
    for i, task in enumerate(tasks):
        role = roles_of[i]
        path = ("spec", "tasks", i)
        ctx.role_paths[role] = path
        compiled = order.index(role)
        base = pointer("spec", "tasks", compiled, "template")
        bases[role] = base
        for key, value in task.items():
            if key not in ("name", "replicas", "template", "policies"):
                ctx.unmap(path + (key,), "add", pointer("spec", "tasks", compiled, key), value)
        importer = PodImporter(ctx, framework, role, accelerator)
        importer.generated_volumes = framework == "mpi" and role == "launcher"  # the hostfile ConfigMap
        importer.take = ("activeDeadlineSeconds",)  # the volcano target writes the job's on every pod
        if importer.generated_volumes:
            importer.skip_volumes = ("mpi-job-config",)  # trainspec's own, when re-importing its output
        draft = importer.template(task.get("template"), path + ("template",), base)
        accelerator = importer.accelerator
        pod_policy = ((task.get("template") or {}).get("spec") or {}).get("restartPolicy") or "Always"
        task_policies = list(task.get("policies") or [])
        restart[role] = pod_policy
        if pod_policy == "Never" and (job_exit_code or _exit_code(task_policies)):
            restart[role] = "ExitCode"
            if not job_exit_code:
                task_policies = [p for p in task_policies if p not in EXIT_CODE_POLICIES]
        replicas[role] = task.get("replicas", 1)
        ctx.compiled_index[role] = compiled
        if role in ctx.task_names:
            draft.body["taskName"] = ctx.task_names[role]
            ctx.uses("taskName")
        if framework == "generic" and {"event": "TaskCompleted", "action": "CompleteJob"} in task_policies:
            deciders.append(role)
        drafts[role] = draft
    if len(deciders) == 1:  # the rest of the policies is compared with the compiled job's (`policies`)
        job["success"] = {"role": deciders[0]}
        ctx.uses("success")
    deadlines = [d.taken.get("activeDeadlineSeconds") for d in drafts.values()]
    if all(deadlines) and len({d[0] for d in deadlines if d}) == 1:
        job["activeDeadlineSeconds"] = deadlines[0][0]  # type: ignore[index]
    else:
        for taken in filter(None, deadlines):
            ctx.unmap(taken[1], "add", taken[2], taken[0], "a deadline not the same for every task")
    if framework == "mpi" and "worker" in drafts and drafts["worker"].body.get("command") is None:
        ctx.comment(("spec", "roles", "worker"), "no command: trainspec runs /usr/sbin/sshd -De, as mpi-operator")
    if port and port != PLUGIN_DEFAULT_PORT.get(framework):
        for draft in drafts.values():
            draft.port = draft.port or port
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": metadata(data.get("metadata"), ctx),
            "spec": assemble(ctx, framework, data.get("metadata"), drafts, bases, job, restart, replicas)}


def _roles(ctx: Context, tasks: list[dict], plugins: dict) -> tuple[str, dict[int, str], int | None]:
    names = [str(t.get("name", f"default{i}")) for i, t in enumerate(tasks)]
    if "ray" in plugins:
        raise ctx.fail(("spec", "plugins", "ray"), "a Volcano Ray job: Ray is not supported",
                       "a tensorflow, pytorch or mpi job", "trainspec compiles jobs with fixed roles; keep Ray "
                       "jobs in KubeRay or Volcano")
    for plugin, (framework, flags) in PLUGIN_ROLES.items():
        if plugin not in plugins:
            continue
        args = plugins[plugin] or []
        given = {}
        port = None
        for arg in args if isinstance(args, list) else []:
            flag, _, value = str(arg).lstrip("-").partition("=")
            if flag in flags:
                given[flag] = value
            elif flag == "port" and value.isdigit():
                port = int(value)
        task_role = {given.get(flag, flag): role for flag, role in flags.items()}
        out = {}
        for i, name in enumerate(names):
            if name not in task_role:
                raise ctx.fail(("spec", "tasks", i, "name"), f"task {name!r} is not named by the {plugin} plugin",
                               "tasks named " + ", ".join(sorted(task_role)),
                               f"set the plugin's arguments, e.g. --{next(iter(flags))}={name}")
            out[i] = task_role[name]
            if name != task_role[name]:
                ctx.comment(("spec", "roles", task_role[name]),
                            f"task {name} imported as role {task_role[name]} ({plugin} plugin)")
                ctx.task_names[task_role[name]] = name
        return framework, out, port
    return _generic(ctx, tasks, names)


def _generic(ctx: Context, tasks: list[dict], names: list[str]) -> tuple[str, dict[int, str], None]:
    """No framework plugin: a generic job, one role per task under the task's own name (nothing injected)."""
    if len(set(names)) != len(names):
        raise ctx.fail(("spec", "tasks"), "two tasks share a name", "unique task names")
    ctx.comment(("spec", "framework"), "no framework plugin: one role per task, nothing injected")
    return "generic", dict(enumerate(names)), None


SERVICE_PLUGINS = ("env", "svc", "ssh")  # compared with what the volcano target writes (`policies`)


def _plugins(ctx: Context, plugins: dict, framework: str, port: int | None) -> None:
    for name, args in plugins.items():
        path = ("spec", "plugins", name)
        args = args or []
        if name in SERVICE_PLUGINS:
            continue
        if name != framework:
            ctx.unmap(path, "add", pointer("spec", "plugins", name), args, f"plugin {name} is not one trainspec uses")
        else:
            flags = set(PLUGIN_ROLES[framework][1]) | {"port"}
            extra = [a for a in args if str(a).lstrip("-").partition("=")[0] not in flags]
            if extra:
                ctx.unmap(path, "add", pointer("spec", "plugins", name) + "/-", extra[0] if len(extra) == 1
                          else extra, f"{name} plugin arguments trainspec does not write")


def _service_plugins(ctx: Context, plugins: dict, compiled: dict) -> None:
    """env, svc and ssh exactly as the source has them: `--publish-not-ready-addresses` changes DNS, an ssh
    plugin the source lacks adds keys and a sshd config."""
    def norm(name: str, args) -> list[str]:
        out = [str(a) for a in args or []]
        return [a for a in out if a != "--ssh-key-file-path=/root/.ssh"] if name == "ssh" else out

    for name in SERVICE_PLUGINS:
        path = ("spec", "plugins", name)
        if name in plugins and (name not in compiled or norm(name, plugins[name]) != norm(name, compiled[name])):
            ctx.unmap(path, "add", pointer("spec", "plugins", name), list(plugins[name] or []),
                      f"{name} plugin arguments trainspec does not write")
        elif name not in plugins and name in compiled:
            ctx.unmap(("spec", "plugins") if plugins else ("spec",), "remove", pointer("spec", "plugins", name),
                      None, f"the {name} plugin is written by trainspec, not in the source")


def _exit_code(policies: list) -> bool:
    return all(p in policies for p in EXIT_CODE_POLICIES)


def policies(ctx: Context, data: dict, compiled: dict) -> None:
    """Patch the policies where the compiled job's differ from the source's, the whole list at once.

    Volcano takes the first policy matching an event, a task's before the job's: adding the
    source's policies beside trainspec's own (`PodFailed` twice) would change what happens, and
    the webhook rejects a duplicate event.  So a differing list is replaced by the source's.
    """
    spec, out = data.get("spec") or {}, compiled.get("spec") or {}
    _service_plugins(ctx, spec.get("plugins") or {}, out.get("plugins") or {})
    want, have = list(spec.get("policies") or []), list(out.get("policies") or [])
    if want != have:
        _policy_op(ctx, ("spec", "policies") if want else ("spec",), "/spec/policies", want,
                   "the job's policies differ from the ones trainspec writes")
    tasks = out.get("tasks") or []
    for i, task in enumerate(spec.get("tasks") or []):
        role = next((r for r, p in ctx.role_paths.items() if p == ("spec", "tasks", i)), None)
        if role is None:
            continue
        k = ctx.compiled_index[role]
        first = ctx.task_copies.get(k, [k])[0]
        want = list(task.get("policies") or [])
        have = list(tasks[first].get("policies") or []) if first < len(tasks) else []
        if want != have:
            _policy_op(ctx, ("spec", "tasks", i, "policies") if want else ("spec", "tasks", i),
                       pointer("spec", "tasks", k, "policies"), want,
                       "the task's policies differ from the ones trainspec writes")


def _policy_op(ctx: Context, path: tuple, ptr: str, want: list, why: str) -> None:
    if want:
        ctx.unmap(path, "add", ptr, want, why)  # RFC 6902 add replaces an existing member
    else:
        ctx.unmap(path, "remove", ptr, None, why + " (the source has none)")
