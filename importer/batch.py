"""batch/v1 Jobs -> spec: the `k8s` target's own output (one Indexed Job per role), or a foreign Job.

The k8s target writes (spec v1.3) one Indexed Job per role, labelled `trainspec.dev/job` and, on
its pod template, `trainspec.dev/role` (a role that one template cannot serve: a Job per replica,
labelled `trainspec.dev/index` too), and one headless Service for the job.  Such a file imports as
the job it came from: one role per role label (replicas = the completions of its Jobs), the
framework from the training container's port name (`tfjob-port`...; `trainspec`: generic), the pod
from the role's first Job.  Values the spec wrote per replica (`{{ index }}`, host lists) cannot be
told from literal text: where a role's Jobs' commands or env differ, that is a loss.  The output of
trainspec before v1.3 (a Job and a Service per replica) imports the same way, and its Job names,
which the k8s target no longer writes, are a loss.

Any other Job (an Indexed Job with its headless Service, typically) imports as a generic
one-role spec.  When it is an Indexed Job (completions = parallelism) named `<service>-<rest>`
whose pods' subdomain is `<service>`, the k8s target writes it again by name (job `<service>`,
taskName `<rest>`, pods `<service>-<rest>-<i>.<service>`) and `after_compile` compares the two
Jobs' settings: whatever differs (a backoff the spec cannot express...) is a loss.  Any other Job
is a loss under --strict: its names, hostnames or Service would change.  What the spec does not
map is a loss too (Context.patchable is False: the output is written, not patched).
"""

from __future__ import annotations

from .assemble import assemble, metadata
from .context import Context
from .objects import diff_fields
from .pod import CONTAINER_NAME, PORT_NAMES, PodImporter, RoleDraft, is_injected, pointer

JOB_LABEL, ROLE_LABEL, INDEX_LABEL = "trainspec.dev/job", "trainspec.dev/role", "trainspec.dev/index"


def job_label(data: dict):
    """The trainspec.dev/job label of a Job the k8s target wrote (None for any other)."""
    meta = data.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels.get(JOB_LABEL) if isinstance(labels, dict) else None


def own_group(docs: list, data: dict) -> list[dict]:
    """The k8s target's Jobs of the job `data` belongs to (in file order), or [] for a foreign Job."""
    job = job_label(data)
    if job is None:
        return []
    from .shapes import checked

    # every Job of the group is read, so each is shape-checked as the selected one was (SpecErrors at its line)
    return [checked(d, "batch") for d in docs if isinstance(d.data, dict) and d.data.get("kind") == "Job"
            and d.data.get("apiVersion") == "batch/v1" and job_label(d.data) == job]


def _pod(job: dict) -> dict:
    return ((job.get("spec") or {}).get("template") or {})


def _framework(pod: dict) -> str:
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    ports = {str(p.get("name")) for c in containers if isinstance(c, dict) for p in c.get("ports") or []
             if isinstance(p, dict)}
    names = {str(c.get("name")) for c in containers if isinstance(c, dict)}
    for framework, port in PORT_NAMES.items():
        if port in ports and (framework == "generic" or CONTAINER_NAME[framework] in names):
            return framework
    return "generic"


def import_job(ctx: Context, data: dict, docs: list, runtime_paths: list[str] | None = None) -> dict:
    ctx.patchable = False
    group = own_group(docs, data)
    ctx.group = group
    if group and not all(isinstance(v, (str, int)) for g in group for v in (
            (g.get("metadata") or {}).get("name"), job_label(g))):
        raise ctx.fail(("metadata",), "a Job of the k8s output has no name", "metadata.name")
    if not group:
        return _foreign(ctx, data)
    pods: dict[str, list[dict]] = {}
    for job in group:
        labels = (_pod(job).get("metadata") or {}).get("labels") or {}
        pods.setdefault(str(labels.get(ROLE_LABEL)), []).append(job)
    first = pods[next(iter(pods))][0]
    framework = _framework(_pod(first))
    name = ((first.get("metadata") or {}).get("labels") or {}).get(JOB_LABEL)
    ctx.job_name = str(name)
    drafts: dict[str, RoleDraft] = {}
    restart: dict[str, str | None] = {}
    replicas: dict[str, int] = {}
    for role, jobs in pods.items():
        importer = PodImporter(ctx, framework, role, None)  # positions: the first Job's (one document is read)
        # the k8s target names the pods' domain (its Service) and a per-replica Job's host itself
        importer.target_sets = {"subdomain": (ctx.job_name,), "hostname": tuple(
            f"{(j.get('metadata') or {}).get('name')}" for j in jobs)}
        drafts[role] = importer.template(_pod(jobs[0]), ("spec", "template"), "")
        restart[role] = (_pod(jobs[0]).get("spec") or {}).get("restartPolicy")
        replicas[role] = sum(_pods_of(j) for j in jobs)
        texts = {_main_text(j, framework) for j in jobs}
        if len(texts) > 1:
            ctx.lose(("spec", "template", "spec", "containers"), f"role {role}'s replicas run different commands or "
                     "env: the spec's per-replica values ({{ index }}, host lists) cannot be told from the text")
    meta = dict(first.get("metadata") or {}, name=name)
    meta["labels"] = {k: v for k, v in (meta.get("labels") or {}).items() if k != "app.kubernetes.io/component"}
    out = assemble(ctx, framework, meta, drafts, {r: "" for r in drafts}, {}, restart, replicas)
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": metadata(meta, ctx), "spec": out}


def _pods_of(job: dict) -> int:
    """How many replicas one Job of the k8s output runs: an Indexed Job's completions, else one."""
    spec = job.get("spec") or {}
    count = spec.get("completions") if spec.get("completionMode") == "Indexed" else 1
    return count if isinstance(count, int) and count >= 0 else 1


def _main_text(job: dict, framework: str) -> str:
    containers = (_pod(job).get("spec") or {}).get("containers") or [{}]
    main = containers[0] if isinstance(containers[0], dict) else {}
    env = [e for e in main.get("env") or [] if isinstance(e, dict) and not is_injected(str(e.get("name")), framework)]
    return repr((main.get("command"), main.get("args"), env))


def _foreign(ctx: Context, data: dict) -> dict:
    spec = data.get("spec") or {}
    pod = spec.get("template")
    containers = ((pod or {}).get("spec") or {}).get("containers") or [{}]
    role = str((containers[0] if isinstance(containers[0], dict) else {}).get("name") or "main")
    count = spec.get("parallelism", spec.get("completions", 1))
    count = count if isinstance(count, int) and count >= 0 else 1
    meta = dict(data.get("metadata") or {})
    names = _indexed_names(spec, meta)
    importer = PodImporter(ctx, "generic", role, None)
    if names is not None:  # the k8s target writes this Job again, by name: after_compile compares them
        job, task = names
        meta["name"] = job
        ctx.job_name = job
        ctx.group = [data]
        importer.target_sets = {"subdomain": (job,)}
    else:
        ctx.lose(("spec",), f"a batch/v1 Job of {count} pod(s) whose pods the k8s target cannot name alike: it "
                 "writes one Indexed Job per role named <job>-<role> (pods <job>-<role>-<i>) under the headless "
                 "Service <job>; here completionMode, completions = parallelism, or the Job's name "
                 "<service>-<role> (its pods' subdomain and Service) differ: name the Job <service>-<role> "
                 "with subdomain <service> to keep its pods' names")
    draft = importer.template(pod, ("spec", "template"), pointer("spec", "template"))
    if names is not None and names[1] != role:
        draft.body["taskName"] = names[1]
        ctx.uses("taskName")
    if names is None:
        for key in spec:
            if key not in ("parallelism", "completions", "completionMode", "template"):
                ctx.lose(("spec", key), f"Job {key} has no spec field")
    job_fields: dict = {}
    if names is not None:
        for key in ("activeDeadlineSeconds", "ttlSecondsAfterFinished"):
            if isinstance(spec.get(key), int):
                job_fields[key] = spec[key]
        success = spec.get("successPolicy")
        if success == {"rules": [{"succeededCount": 1}]}:  # the first pod to succeed decides: AnyReplica
            job_fields["success"] = {"role": role, "policy": "AnyReplica"}
    policy = ((pod or {}).get("spec") or {}).get("restartPolicy")
    out = assemble(ctx, "generic", meta, {role: draft}, {role: ""}, job_fields, {role: policy},
                   {role: count})
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": metadata(meta, ctx),
            "spec": out}


def _indexed_names(spec: dict, meta: dict) -> tuple[str, str] | None:
    """(job, task) so that the k8s target's `<job>-<task>` Indexed Job under the Service `<job>` is this Job and its
    pods' DNS names stay; None when that cannot be."""
    if spec.get("completionMode") != "Indexed" or spec.get("completions") != spec.get("parallelism", 1):
        return None
    name = meta.get("name")
    subdomain = (((spec.get("template") or {}).get("spec") or {}).get("subdomain"))
    if not isinstance(name, str) or not isinstance(subdomain, str) or not name.startswith(subdomain + "-"):
        return None
    return subdomain, name[len(subdomain) + 1:]


def after_compile(ctx: Context, data: dict, compiled) -> None:
    """The k8s output's Jobs, by name, against the source's: any Job-level difference is a loss."""
    compiled = compiled if isinstance(compiled, list) else [compiled]
    by_name = {(c.get("metadata") or {}).get("name"): c for c in compiled}
    for src in ctx.group:
        out = by_name.get((src.get("metadata") or {}).get("name"))
        if out is None:
            ctx.lose(("metadata", "name"), f"Job {(src.get('metadata') or {}).get('name')} is not in the output")
            continue
        diff_fields(ctx, src.get("spec") or {}, out.get("spec") or {}, ("spec",), "", skip=("template",),
                    why="a Job setting the spec does not hold")
