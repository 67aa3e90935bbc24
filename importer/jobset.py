"""JobSet (jobset.x-k8s.io/v1alpha2) -> a `framework: generic` spec, one role per replicatedJob.

Field meanings: shared/reference/CONVENTIONS-V2.md §1.  Each replicatedJob keeps its name as
the role's (so its hosts `<jobset>-<name>-<j>-<i>.<subdomain>` stay); its pod template goes
through the pod importer; `successPolicy` on one replicatedJob becomes `success`.  Everything
else of the JobSet and its Job templates (network, failurePolicy, startupPolicy, completionMode,
backoffLimit, podFailurePolicy, several Jobs per replicatedJob...) is compared with what the
`jobset` target writes and patched where it differs (`after_compile`), so it round-trips exactly.
"""

from __future__ import annotations

from trainspec.compiler.kinds.jobset import JOBSET

from .assemble import assemble, metadata
from .context import Context
from .objects import diff_fields, diff_metadata
from .pod import PodImporter, RoleDraft, pointer

API = JOBSET.api_version
SUCCESS = {"All": "AllReplicas", "Any": "AnyReplica"}


def _rjobs(data: dict) -> list:
    return (data.get("spec") or {}).get("replicatedJobs") or []


def import_job(ctx: Context, data: dict, docs: list | None = None, runtime_paths: list[str] | None = None) -> dict:
    if data.get("apiVersion") != API:
        raise ctx.fail(("apiVersion",), f"JobSet {data.get('apiVersion')!r} is not supported", API)
    spec: dict = data["spec"] if isinstance(data.get("spec"), dict) else {}
    rjobs = _rjobs(data)
    if not isinstance(rjobs, list) or not rjobs or not all(isinstance(r, dict) for r in rjobs):
        raise ctx.fail(("spec", "replicatedJobs"), "a JobSet without replicatedJobs", "a list of replicatedJobs")
    drafts: dict[str, RoleDraft] = {}
    bases: dict[str, str] = {}
    restart: dict[str, str | None] = {}
    replicas: dict[str, int] = {}
    accelerator = None
    for k, rj in enumerate(rjobs):
        path = ("spec", "replicatedJobs", k)
        name = rj.get("name")
        if not isinstance(name, str) or name in drafts:
            raise ctx.fail(path + ("name",), "a replicatedJob needs a unique name", "a DNS-1123 label")
        job_spec = ((rj.get("template") or {}).get("spec") or {})
        pod = job_spec.get("template")
        base = pointer("spec", "replicatedJobs", k, "template", "spec", "template")
        ctx.role_paths[name] = path + ("template", "spec")
        importer = PodImporter(ctx, "generic", name, accelerator)
        draft = importer.template(pod, path + ("template", "spec", "template"), base)
        accelerator = importer.accelerator
        policy = ((pod or {}).get("spec") or {}).get("restartPolicy")
        restart[name] = policy if policy in ("Never", "OnFailure") else "OnFailure"  # JobSet's default
        pods = job_spec.get("parallelism", job_spec.get("completions", 1))
        replicas[name] = pods if isinstance(pods, int) and pods >= 0 else 1
        drafts[name] = draft
        bases[name] = base
    job: dict = {}
    if isinstance(spec.get("ttlSecondsAfterFinished"), int):
        job["ttlSecondsAfterFinished"] = spec["ttlSecondsAfterFinished"]
    success = spec.get("successPolicy") or {}
    targets = success.get("targetReplicatedJobs") or []
    if len(targets) == 1 and targets[0] in drafts and success.get("operator") in SUCCESS:
        job["success"] = {"role": targets[0]}
        if SUCCESS[success["operator"]] != "AllReplicas":
            job["success"]["policy"] = SUCCESS[success["operator"]]
        ctx.uses("success")
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": metadata(data.get("metadata"), ctx),
            "spec": assemble(ctx, "generic", data.get("metadata"), drafts, bases, job, restart, replicas)}


# What JobSet's webhook fills in where a key is absent: a compiled value equal to it needs no patch.
JOB_DEFAULTS = {"completionMode": "Indexed"}
RJ_DEFAULTS = {"replicas": 1}
JOBSET_DEFAULTS = {"successPolicy": {"operator": "All"}}


def after_compile(ctx: Context, data: dict, compiled: dict) -> None:
    """Patch the JobSet-level and Job-level settings where trainspec writes them differently."""
    spec, out = data.get("spec") or {}, compiled.get("spec") or {}
    out_jobs = out.get("replicatedJobs") or []
    names = [rj.get("name") for rj in out_jobs]
    moved = {k: names.index(rj.get("name")) for k, rj in enumerate(_rjobs(data)) if rj.get("name") in names}
    renumber(ctx, "/spec/replicatedJobs/", moved)
    src = {**{k: v for k, v in JOBSET_DEFAULTS.items() if out.get(k) == v}, **spec}
    diff_fields(ctx, src, out, ("spec",), "/spec", skip=("replicatedJobs",), why="a JobSet setting")
    for k, rj in enumerate(_rjobs(data)):
        if k not in moved:
            continue
        c = moved[k]
        path, ptr = ("spec", "replicatedJobs", k), pointer("spec", "replicatedJobs", c)
        diff_fields(ctx, {**RJ_DEFAULTS, **rj}, out_jobs[c], path, ptr, skip=("name", "template"),
                    why="a replicatedJob setting")
        src_t, out_t = rj.get("template") or {}, out_jobs[c].get("template") or {}
        diff_metadata(ctx, src_t.get("metadata") or {}, out_t.get("metadata") or {}, path + ("template", "metadata"),
                      ptr + "/template/metadata")
        src_spec = {**JOB_DEFAULTS, **(src_t.get("spec") or {})}
        diff_fields(ctx, src_spec, out_t.get("spec") or {}, path + ("template", "spec"),
                    ptr + "/template/spec", skip=("template",), why="a Job setting")


def renumber(ctx: Context, prefix: str, moved: dict[int, int]) -> None:
    """Pointers written with the source's list index, to the compiled object's (the target may reorder)."""
    def fix(ptr: str) -> str:
        if not ptr.startswith(prefix):
            return ptr
        head, _, rest = ptr[len(prefix):].partition("/")
        if not head.isdigit() or int(head) not in moved:
            return ptr
        return f"{prefix}{moved[int(head)]}" + (f"/{rest}" if rest else "")

    for item in ctx.unmapped:
        item.op["path"] = fix(item.op["path"])
    ctx.absent = {fix(p) for p in ctx.absent}
