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
from .prelude import without_rank_prelude

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
    return [checked(d) for d in docs if isinstance(d.data, dict) and d.data.get("kind") == "Job"
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
        return _foreign(ctx, data, docs)
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
        drafts[role] = importer.template(without_rank_prelude(_pod(jobs[0]), framework), ("spec", "template"), "")
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


# The k8s file of a one-role job, in order (targets/k8s/render.objects): the topology ConfigMap, the job's headless
# Service, the role's Job.  A foreign Job's patches address them so (spec.patches.k8s is the file's list).
COMPILED_KINDS = ("ConfigMap", "Service", "Job")
SERVICE_AT, JOB_AT = 1, 2
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # scheduling.queue on the k8s target (targets/common.kueue_labels)


def _service(docs: list, name) -> dict | None:
    """The file's v1 Service named `name` (the pods' subdomain), if the file has it."""
    if not isinstance(name, str):
        return None
    from .shapes import checked

    found = next((d for d in docs if isinstance(d.data, dict) and d.data.get("kind") == "Service"
                  and d.data.get("apiVersion") == "v1" and isinstance(d.data.get("metadata"), dict)
                  and d.data["metadata"].get("name") == name), None)
    return None if found is None else checked(found)  # SpecErrors at the Service's own lines


def _generated(ctx: Context, meta: dict) -> bool:
    """The source Job is named by metadata.generateName (import_text read its prefix as the name)."""
    source = ctx.doc.data.get("metadata") if isinstance(ctx.doc.data, dict) else None
    return isinstance(source, dict) and isinstance(source.get("generateName"), str) and "generateName" not in meta


def _foreign(ctx: Context, data: dict, docs: list) -> dict:
    """A Job trainspec did not write: one generic role; the spec is named as the pods' subdomain (the Service the
    k8s target writes for the job), else as the Job; the role's Job is `<job>-<taskName>` where the Job's name has
    that form, else a patch names it as the source did (not under generateName: each run names it anew)."""
    ctx.patchable = True  # the k8s file takes patches, addressed by object index (docs/spec.md, patches)
    ctx.foreign = True
    spec = data.get("spec") or {}
    pod = spec.get("template")
    pod_spec = (pod or {}).get("spec") if isinstance(pod, dict) else None
    pod_spec = pod_spec if isinstance(pod_spec, dict) else {}
    containers = pod_spec.get("containers") or [{}]
    role = str((containers[0] if isinstance(containers[0], dict) else {}).get("name") or "main")
    # replicas are the completion indexes (an Indexed Job's pod identities); parallelism, when it differs, is a patch
    count = next((v for v in (spec.get("completions"), spec.get("parallelism")) if isinstance(v, int) and v >= 0), 1)
    meta = dict(data.get("metadata") or {})
    job_name = str(meta.get("name"))
    subdomain = pod_spec.get("subdomain")
    ctx.service = _service(docs, subdomain)
    name = subdomain if isinstance(subdomain, str) else job_name
    if isinstance(subdomain, str) and _generated(ctx, meta):
        ctx.lose(("metadata",), "a Job named by generateName whose pods' subdomain is a Service: the spec's "
                 "generateName would name the Service, not the Job")
    meta["name"] = name
    ctx.job_name = name
    if isinstance(subdomain, str) and ctx.service is None:
        ctx.comment(("metadata", "name"), f"the k8s target writes the headless Service {name} the pods' subdomain "
                    "names (the source expected it to exist)")
    elif not isinstance(subdomain, str):
        ctx.comment(("metadata", "name"), f"the source's pods had no subdomain: the k8s target adds the headless "
                    f"Service {name} and the pods' subdomain (they become addressable; nothing else changes)")
    if spec.get("completionMode") != "Indexed":
        ctx.comment(("spec", "roles", role), "NonIndexed (a patch keeps it): its pods have no index and no stable host "
                    "name, so TRAINSPEC_INDEX is empty and TRAINSPEC_HOSTS_* name no pod")
    importer = PodImporter(ctx, "generic", role, None)
    importer.target_sets = {"subdomain": (name,)}
    base = f"/{JOB_AT}" + pointer("spec", "template")
    draft = importer.template(pod, ("spec", "template"), base)
    if job_name.startswith(name + "-") and job_name != f"{name}-{role}":  # the Job is <job>-<taskName>: first-class
        draft.body["taskName"] = job_name[len(name) + 1:]
        ctx.uses("taskName")
    job_fields: dict = {}
    labels = dict(meta.get("labels") or {})
    if isinstance(labels.get(QUEUE_LABEL), str):  # Kueue's queue: the k8s target labels the role's Job with it
        job_fields["scheduling"] = {"queue": labels.pop(QUEUE_LABEL)}
        meta["labels"] = labels
    policy = pod_spec.get("restartPolicy")
    for key in ("activeDeadlineSeconds", "ttlSecondsAfterFinished") + (("backoffLimit",) if policy == "OnFailure"
                                                                       else ()):
        if isinstance(spec.get(key), int):  # backoffLimit: the role's Job's under OnFailure (Never: per index)
            job_fields[key] = spec[key]
    if spec.get("successPolicy") == {"rules": [{"succeededCount": 1}]} and count > 1:  # first success decides
        job_fields["success"] = {"role": role, "policy": "AnyReplica"}
    out = assemble(ctx, "generic", meta, {role: draft}, {role: base}, job_fields, {role: policy}, {role: count})
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": metadata(meta, ctx, f"/{JOB_AT}"),
            "spec": out}


def _after_foreign(ctx: Context, data: dict, compiled: list) -> None:
    """The k8s file against the source Job (and its Service): every difference becomes a patch of that object."""
    kinds = tuple(c.get("kind") for c in compiled)
    if kinds != COMPILED_KINDS:
        ctx.lose(("spec",), f"the k8s target writes {', '.join(map(str, kinds))} for this Job, not one Job")
        return
    out = compiled[JOB_AT]
    meta = data.get("metadata") or {}
    job = meta.get("name")
    if not _generated(ctx, meta) and (out.get("metadata") or {}).get("name") != job:
        ctx.unmap(("metadata", "name"), "replace", f"/{JOB_AT}/metadata/name", job,
                  "the Job's name (the k8s target names a role's Job <job>-<role>; its pods' hostnames "
                  "<Job name>-<index> follow it)")
        # the replicas' host list (TRAINSPEC_HOSTS_<ROLE>, in the topology ConfigMap) names the pods as they now are
        for key, value in sorted((compiled[0].get("data") or {}).items()):
            if key.startswith("TRAINSPEC_HOSTS_") and isinstance(value, str) and value:
                hosts = [f"{job}-{i}.{ctx.job_name}:{item.rsplit(':', 1)[-1]}"
                         for i, item in enumerate(value.split(","))]
                ctx.unmap(("metadata", "name"), "replace", f"/0/data/{key}", ",".join(hosts),
                          f"{key}: the pods of the Job {job}")
        ctx.comment(("metadata", "name"), f"patches name the Job {job} as the source did, and its pods "
                    f"{job}-<i>.{ctx.job_name} in TRAINSPEC_HOSTS_*")
    diff_fields(ctx, data.get("spec") or {}, out.get("spec") or {}, ("spec",), f"/{JOB_AT}/spec", skip=("template",),
                why="a Job setting the spec does not hold")
    if ctx.service is None:
        return
    svc, svc_out = ctx.service, compiled[SERVICE_AT]
    at = ("spec", "template", "spec", "subdomain")  # the Service is another document: its line is the subdomain's
    name = (svc.get("metadata") or {}).get("name")
    for key, value in (svc.get("spec") or {}).items():
        if (svc_out.get("spec") or {}).get(key) != value:
            ctx.unmap(at, "add", f"/{SERVICE_AT}/spec/{pointer(key)[1:]}", value, f"Service {name} spec.{key}")
    for key in (svc_out.get("spec") or {}):
        if key not in (svc.get("spec") or {}):
            ctx.unmap(at, "remove", f"/{SERVICE_AT}/spec/{pointer(key)[1:]}", None,
                      f"Service {name} spec.{key} is written by trainspec, not in the source")
    for part in ("labels", "annotations"):
        want = {k: str(v) for k, v in ((svc.get("metadata") or {}).get(part) or {}).items()}
        have = (svc_out.get("metadata") or {}).get(part)
        if want and not isinstance(have, dict):  # trainspec writes none: the source's map, whole
            ctx.unmap(at, "add", f"/{SERVICE_AT}/metadata/{part}", want, f"Service {name} metadata.{part}")
            continue
        for key, value in want.items():
            if (have or {}).get(key) != value:
                ctx.unmap(at, "add", f"/{SERVICE_AT}/metadata/{part}" + pointer(key), value,
                          f"Service {name} metadata.{part}")
    for key in svc.get("metadata") or {}:
        if key not in ("name", "namespace", "labels", "annotations"):
            ctx.unmap(at, "add", f"/{SERVICE_AT}/metadata/{pointer(key)[1:]}", svc["metadata"][key],
                      f"Service {name} metadata.{key}")
    if (svc.get("metadata") or {}).get("namespace", "default") != (svc_out.get("metadata") or {}).get("namespace"):
        ctx.lose(at, f"Service {name} is in another namespace than the Job")


def after_compile(ctx: Context, data: dict, compiled: list) -> None:
    """The k8s output against the source: a foreign Job's differences are patches (_after_foreign); the k8s
    target's own Jobs, by name: any Job-level difference is a loss."""
    if ctx.foreign:
        _after_foreign(ctx, data, compiled)
        return
    by_name = {(c.get("metadata") or {}).get("name"): c for c in compiled if c.get("kind") == "Job"}
    for src in ctx.group:
        out = by_name.get((src.get("metadata") or {}).get("name"))
        if out is None:
            ctx.lose(("metadata", "name"), f"Job {(src.get('metadata') or {}).get('name')} is not in the output")
            continue
        diff_fields(ctx, src.get("spec") or {}, out.get("spec") or {}, ("spec",), "", skip=("template",),
                    why="a Job setting the spec does not hold")
