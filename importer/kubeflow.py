"""Kubeflow v1 jobs (TFJob, PyTorchJob, MXJob, XGBoostJob, PaddleJob, JAXJob) and MPIJob v2beta1 -> spec.

Field meanings: shared/reference/CONVENTIONS.md §1 and CONVENTIONS-V2.md §4.
Patches address the compiled job object (`/spec/<x>ReplicaSpecs/<Type>/...`).
"""

from __future__ import annotations

from trainspec.compiler.kinds import OperatorKind
from trainspec.compiler.kinds.kubeflow import JAX_JOB, MPI_JOB, MX_JOB, PADDLE_JOB, PYTORCH_JOB, TF_JOB, XGBOOST_JOB
from trainspec.compiler.model import RDZV_BACKENDS

from .assemble import assemble, metadata
from .context import Context
from .pod import PodImporter, RoleDraft, pointer

# The replica types the importer accepts, as roles: the operator's, plus TFJob's legacy Master (in the
# order an error lists them).
ACCEPTED_TYPES: dict[OperatorKind, dict[str, str]] = {
    TF_JOB: {"PS": "ps", "Worker": "worker", "Chief": "chief", "Master": "chief", "Evaluator": "evaluator"},
    PYTORCH_JOB: {"Master": "master", "Worker": "worker"},
    MX_JOB: {"Scheduler": "scheduler", "Server": "server", "Worker": "worker"},
    XGBOOST_JOB: {"Master": "master", "Worker": "worker"},
    PADDLE_JOB: {"Master": "master", "Worker": "worker"},
    JAX_JOB: {"Worker": "worker"},
    MPI_JOB: {"Launcher": "launcher", "Worker": "worker"},
}
# kind -> (apiVersion, framework, replica-specs field, {replica type: role}); the kind's own facts from
# compiler/kinds/kubeflow.py
KINDS = {kind.kind: (kind.api_version, kind.framework, kind.replica_specs, types)
         for kind, types in ACCEPTED_TYPES.items()}
COMPILED_TYPE = {"ps": "PS"}
MPI_WORKER_COMMAND = ["/usr/sbin/sshd", "-De"]
RUN_POLICY = ("cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit")
ELASTIC = ("minReplicas", "maxReplicas", "rdzvBackend", "rdzvPort", "maxRestarts")


def compiled_type(role: str) -> str:
    return COMPILED_TYPE.get(role, role.capitalize())


def import_job(ctx: Context, data: dict, docs: list | None = None, runtime_paths: list[str] | None = None) -> dict:
    kind = data["kind"]
    api, framework, field, types = KINDS[kind]
    if data.get("apiVersion") != api:
        raise ctx.fail(("apiVersion",), f"{kind} {data.get('apiVersion')!r} is not supported", repr(api),
                       f"{MPI_JOB.kind} {MPI_JOB.group}/v1 is the old mpi-operator; "
                       f"convert it to {MPI_JOB.version} first"
                       if kind == MPI_JOB.kind else "")
    spec = data.get("spec")
    if not isinstance(spec, dict):
        raise ctx.fail(("spec",), "has no spec", "a mapping")
    specs = spec.get(field)
    if not isinstance(specs, dict) or not specs:
        raise ctx.fail(("spec", field), f"a {kind} without {field}", "at least one replica type")

    job: dict = {}
    block: dict = {}
    legacy: dict = {}
    for key, value in spec.items():
        path: tuple = ("spec", key)
        if key == field:
            continue
        if key == "runPolicy" and isinstance(value, dict):
            _run_policy(ctx, value, job)
        elif key in RUN_POLICY and framework != "mpi":
            # kubeflow/tf-operator v1.0 had these beside the replica specs; runPolicy took them over
            legacy[key] = value
            ctx.comment(("spec", key), f"from the legacy spec.{key} (now runPolicy.{key})")
        elif framework == "tensorflow" and key == "successPolicy":
            if value == "AllWorkers":
                block["successPolicy"] = "AllWorkers"
            elif value not in ("", None):
                ctx.unmap(path, "add", f"/spec/{key}", value)
        elif framework == "pytorch" and key == "nprocPerNode":
            block["nprocPerNode"] = value
        elif framework == "pytorch" and key == "elasticPolicy" and isinstance(value, dict):
            elastic = {k: value[k] for k in ELASTIC if k in value}
            if elastic.get("rdzvBackend") not in (None, *RDZV_BACKENDS):  # the spec says c10d only
                ctx.unmap(path + ("rdzvBackend",), "replace", "/spec/elasticPolicy/rdzvBackend",
                          elastic.pop("rdzvBackend"), "a rendezvous backend the spec does not name")
            for k in value:
                if k not in ELASTIC:
                    ctx.unmap(path + (k,), "add", f"/spec/elasticPolicy/{k}", value[k])
            block["elastic"] = elastic
            ctx.uses("pytorch.elastic")
        elif framework == "mxnet" and key == "jobMode":
            if value != "MXTrain":
                raise ctx.fail(path, f"jobMode {value!r} is not supported", "MXTrain",
                               "MXTune (hyper-parameter tuning) has no spec form")
        elif framework == "mpi" and key == "slotsPerWorker":
            block["slotsPerWorker"] = value
        elif framework == "mpi" and key == "mpiImplementation":
            if value != "OpenMPI":
                block["implementation"] = value
        elif framework == "mpi" and key == "sshAuthMountPath":
            if value != "/root/.ssh":
                block["sshAuthMountPath"] = value
                ctx.uses("mpi.sshAuthMountPath")
        else:
            ctx.unmap(path, "add", f"/spec/{key}", value)

    for key, value in legacy.items():
        job.setdefault(key, value)  # runPolicy's own wins
    lower = {t.lower(): (t, role) for t, role in types.items()}
    drafts: dict[str, RoleDraft] = {}
    bases: dict[str, str] = {}
    restart: dict[str, str | None] = {}
    replicas: dict[str, int] = {}
    accelerator = None
    for rtype, body in specs.items():
        path = ("spec", field, rtype)
        known = lower.get(str(rtype).lower())
        if known is None:
            raise ctx.fail(path, f"replica type {rtype!r} is not supported in a {kind}",
                           "one of " + ", ".join(types))
        role = known[1]
        if role in drafts:
            raise ctx.fail(path, f"replica types {rtype!r} and another both map to role {role!r}",
                           "one of them", "TFJob's Master is the legacy name of Chief")
        if known[0] == "Master" and framework == "tensorflow":
            ctx.comment(("spec", "roles", "chief"), "replica type Master (legacy) imported as role chief")
            ctx.lose(path, "replica type Master becomes Chief: TF_CONFIG names the task 'chief', not 'master'")
        if not isinstance(body, dict):
            raise ctx.fail(path, "is not a replica spec", "a mapping with replicas and template")
        ctx.role_paths[role] = path
        base = pointer("spec", field, compiled_type(role), "template")
        bases[role] = pointer("spec", field, compiled_type(role), "template")
        importer = PodImporter(ctx, framework, role, accelerator)
        for key, value in body.items():
            if key not in ("replicas", "restartPolicy", "template"):
                ctx.unmap(path + (key,), "add", pointer("spec", field, compiled_type(role), key), value)
        draft = importer.template(body.get("template"), path + ("template",), base)
        accelerator = importer.accelerator
        replicas[role] = body.get("replicas", 1)
        restart[role] = body.get("restartPolicy")
        pod_policy = (body.get("template") or {}).get("spec", {}).get("restartPolicy")
        if pod_policy is not None and restart[role] is None:
            ctx.comment(("spec", "roles", role), f"template restartPolicy {pod_policy} not imported: the operator "
                        "sets the pod's from the replica's")
        if framework == "mpi" and role == "worker" and draft.body.get("command") == MPI_WORKER_COMMAND \
                and "args" not in draft.body:
            del draft.body["command"]
            ctx.comment(("spec", "roles", "worker"), "command /usr/sbin/sshd -De left out: mpi-operator's default")
        drafts[role] = draft

    if framework == "mpi" and "slotsPerWorker" not in block and drafts.get("worker") and \
            (drafts["worker"].body.get("resources") or {}).get("gpu"):
        block["slotsPerWorker"] = 1  # trainspec's default is the worker's gpu count; mpi-operator's is 1
        ctx.comment(("spec", "mpi", "slotsPerWorker"), "mpi-operator's default (trainspec's is the gpu count)")
    if framework == "pytorch" and "master" not in drafts and "elastic" not in block:
        ctx.comment(("spec", "roles"), "no Master: a PyTorch spec needs one unless pytorch.elastic is set")
    if block:
        job[framework] = block
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": metadata(data.get("metadata"), ctx),
            "spec": assemble(ctx, framework, data.get("metadata"), drafts, bases, job, restart, replicas)}


def _run_policy(ctx: Context, policy: dict, job: dict) -> None:
    for key, value in policy.items():
        path = ("spec", "runPolicy", key)
        if key in RUN_POLICY and value is not None:
            job[key] = value
        elif key == "schedulingPolicy" and isinstance(value, dict):
            sched = {}
            for k, v in value.items():
                name = {"minAvailable": "minAvailable", "queue": "queue", "priorityClass": "priorityClassName"}.get(k)
                if name:
                    sched[name] = v
                else:
                    ctx.unmap(path + (k,), "add", f"/spec/runPolicy/schedulingPolicy/{k}", v)
            if sched:
                job["scheduling"] = sched
            else:
                ctx.absent.add("/spec/runPolicy/schedulingPolicy")
        else:
            ctx.unmap(path, "add", f"/spec/runPolicy/{key}", value)
