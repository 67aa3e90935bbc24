"""Roles -> one spec: what every role shares becomes a job-level default, the rest stays per role."""

from __future__ import annotations

from trainspec.compiler.model import DEFAULT_PORT, ROLE_ORDER

from .context import Context
from .pod import RESERVED_PREFIXES, RoleDraft, pointer

NEW_FRAMEWORKS = ("xgboost", "paddle", "jax", "generic")
HOISTED = ("containerName", "image", "imagePullPolicy", "command", "args", "workingDir", "serviceAccountName",
           "nodeSelector", "tolerations", "affinity", "securityContext", "podSecurityContext", "podLabels",
           "podAnnotations")
SPEC_ORDER = ("framework", "containerName", "image", "imagePullPolicy", "imagePullSecrets", "command", "args",
              "workingDir", "env", "volumes", "accelerator", "serviceAccountName", "nodeSelector", "tolerations",
              "affinity",
              "securityContext", "podSecurityContext", "podLabels", "podAnnotations", "restartPolicy",
              "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished", "cleanPodPolicy", "scheduling",
              "port", "success", "tensorflow", "pytorch", "mxnet", "mpi", "xgboost", "paddle", "jax", "roles",
              "patches")
ROLE_FIELD_ORDER = ("replicas", "taskName") + tuple(k for k in SPEC_ORDER if k not in ("framework", "roles",
                                                                                      "patches", "success")) + (
    "priorityClassName", "resources", "initContainers", "lifecycle", "probes")
V11_FIELDS = ("imagePullPolicy", "imagePullSecrets", "serviceAccountName", "nodeSelector", "tolerations", "affinity",
              "securityContext", "podSecurityContext", "podLabels", "podAnnotations", "priorityClassName")


# Set by the API server on a job read back from a cluster (`kubectl get -o yaml`), never by its author:
# a job created from the spec gets its own.
SERVER_SET = ("uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
              "deletionGracePeriodSeconds", "managedFields", "selfLink")


def metadata(meta, ctx: Context | None = None, base: str = "") -> dict:
    """The spec's metadata; a key trainspec sets itself, with another value, is patched back (with `ctx`) into the
    compiled job object (`base`: its pointer, for the k8s target's file of objects)."""
    meta = meta if isinstance(meta, dict) else {}
    out: dict = {"name": meta.get("name")}
    if meta.get("namespace"):
        out["namespace"] = meta["namespace"]
    job = str(meta.get("name"))
    own = {"app.kubernetes.io/name": job, "app.kubernetes.io/instance": job, "app.kubernetes.io/part-of": job,
           "app.kubernetes.io/managed-by": "trainspec", "trainspec.dev/job": job}
    for key in ("labels", "annotations"):
        value = {}
        for k, v in (meta.get(key) or {}).items():
            if not k.startswith(RESERVED_PREFIXES):
                value[k] = str(v)
            elif ctx is not None and (key == "annotations" or own.get(k) != str(v)):
                ctx.unmap(("metadata", key, k), "add", base + pointer("metadata", key, k), str(v),
                          f"{k} is a key trainspec sets itself")
        if value:
            out[key] = value
    if ctx is not None:
        for key, value in meta.items():
            if key not in ("name", "namespace", "labels", "annotations") + SERVER_SET:
                # finalizers, ownerReferences...: they change what deleting the job does
                ctx.unmap(("metadata", key), "add", base + pointer("metadata", key), value,
                          f"metadata.{key} has no spec field")
    return out


def _all_equal(values: list) -> bool:
    return bool(values) and all(v is not None for v in values) and all(v == values[0] for v in values)


def assemble(ctx: Context, framework: str, meta, drafts: dict[str, RoleDraft], bases: dict[str, str],
             job: dict, restart: dict[str, str | None], replicas: dict[str, int]) -> dict:
    """The spec as data: `job` holds the job-level fields the source module mapped (runPolicy, ...)."""
    names = list(drafts) if framework == "generic" else [n for n in ROLE_ORDER[framework] if n in drafts]
    roles = {n: drafts[n].body for n in names}
    job_labels = metadata(meta).get("labels", {})
    for n in names:  # trainspec copies the job's labels onto every pod template
        pod_labels = {k: v for k, v in roles[n].pop("podLabels", {}).items() if job_labels.get(k) != v}
        if pod_labels:
            roles[n]["podLabels"] = pod_labels
    spec: dict = {"framework": framework, **job}
    if framework in NEW_FRAMEWORKS:
        ctx.uses(f"framework {framework}")

    hoisted = [k for k in HOISTED if not (framework == "mpi" and k in ("command", "args"))]
    for key in hoisted:
        values = [roles[n].get(key) for n in names]
        if _all_equal(values):
            spec[key] = values[0]
            for n in names:
                del roles[n][key]

    envs = [roles[n].get("env") or {} for n in names]
    shared = {k: v for k, v in envs[0].items() if all(k in e and e[k] == v for e in envs[1:])} if envs else {}
    if shared:
        spec["env"] = shared
        for n in names:
            rest = {k: v for k, v in (roles[n].get("env") or {}).items() if k not in shared}
            roles[n].pop("env", None)
            if rest:
                roles[n]["env"] = rest

    volumes = [drafts[n].volumes or [] for n in names]
    if _all_equal(volumes) and volumes[0]:
        spec["volumes"] = volumes[0]
    elif any(volumes):
        ctx.uses("role volumes")
        for n, vols in zip(names, volumes):
            if vols:
                roles[n]["volumes"] = vols

    secrets = [drafts[n].image_pull_secrets for n in names]
    if _all_equal(secrets):
        spec["imagePullSecrets"] = secrets[0]
    else:
        for n in names:
            role_secrets = drafts[n].image_pull_secrets
            if role_secrets is not None:
                ctx.unmap(_role_path(ctx, n, "imagePullSecrets"), "add", bases[n] + "/spec/imagePullSecrets",
                          [{"name": s} for s in role_secrets],
                          "imagePullSecrets differ by role; the spec field is job-level")

    accelerators = {a for a in (drafts[n].accelerator for n in names) if a is not None}
    if accelerators:
        first = sorted(accelerators)[0]
        if first != "nvidia.com/gpu":
            spec["accelerator"] = first
        for n in names:
            if drafts[n].accelerator not in (None, first):
                res = roles[n]["resources"]
                res.setdefault("limits", {})[drafts[n].accelerator] = str(res.pop("gpu"))
                ctx.uses("resources.requests/limits")

    ports = [drafts[n].port or DEFAULT_PORT[framework] for n in names]
    if _all_equal(ports) and ports[0] != DEFAULT_PORT[framework]:
        spec["port"] = ports[0]
    elif not _all_equal(ports):
        for n, port in zip(names, ports):
            if port != DEFAULT_PORT[framework]:
                roles[n]["port"] = port

    scheduling = dict(spec.get("scheduling") or {})
    pod_schedulers = [drafts[n].pod_scheduler for n in names]
    # A Volcano job always has a scheduler (volcano when unset) and it schedules the PodGroup: pods naming
    # another one keep theirs as a patch, not by moving the job's (what the source's job says would change)
    job_scheduler = scheduling.get("schedulerName", "volcano" if ctx.target == "volcano" else None)
    if _all_equal(pod_schedulers) and job_scheduler in (None, pod_schedulers[0]):
        if not (ctx.target == "volcano" and pod_schedulers[0] == "volcano"):
            scheduling["schedulerName"] = pod_schedulers[0]
    else:
        for n in names:
            if drafts[n].pod_scheduler is not None and drafts[n].pod_scheduler != job_scheduler:
                ctx.unmap(_role_path(ctx, n, "schedulerName"), "add", bases[n] + "/spec/schedulerName",
                          drafts[n].pod_scheduler, "a per-role schedulerName")
    # scheduling.priorityClassName compiles to the job's (runPolicy / Volcano spec) AND every pod's; a role's
    # only to its pods.  So a pod without one, under a job that has one, gets a patch removing it.
    job_priority = scheduling.get("priorityClassName")
    for n in names:
        if job_priority is None:
            continue
        if roles[n].get("priorityClassName") == job_priority:
            del roles[n]["priorityClassName"]
        elif "priorityClassName" not in roles[n]:
            ctx.unmap(("spec",) + _priority_path(ctx), "remove", bases[n] + "/spec/priorityClassName", None,
                      f"the job's priority class is not on role {n}'s pods")
    if scheduling:
        spec["scheduling"] = {k: scheduling[k] for k in ("gang", "minAvailable", "queue", "priorityClassName",
                                                         "schedulerName") if k in scheduling}

    policies = [restart.get(n) for n in names]
    if _all_equal(policies):
        spec["restartPolicy"] = policies[0]
    else:
        for n, policy in zip(names, policies):
            if policy is not None:
                roles[n]["restartPolicy"] = policy

    for key in V11_FIELDS:
        if key in spec or any(key in roles[n] for n in names):
            ctx.uses(key)
    spec["roles"] = {n: ordered({"replicas": replicas[n], **roles[n]}, ROLE_FIELD_ORDER) for n in names}
    return ordered(spec, SPEC_ORDER)


def _priority_path(ctx: Context) -> tuple:
    return ("priorityClassName",) if ctx.target == "volcano" else ("runPolicy", "schedulingPolicy", "priorityClass")


def _role_path(ctx: Context, role: str, key: str) -> tuple:
    """The manifest path of a role's pod field, for positions (best effort: the source module records it)."""
    return ctx.role_paths.get(role, ()) + ("template", "spec", key)


def ordered(data: dict, order: tuple) -> dict:
    rank = {k: i for i, k in enumerate(order)}
    return {k: data[k] for k in sorted(data, key=lambda k: rank.get(k, len(rank)))}


def patches(ctx: Context) -> list[dict]:
    return ctx.patch_ops()


__all__ = ["assemble", "metadata", "patches", "pointer", "ROLE_ORDER", "DEFAULT_PORT"]
