"""`trainspec migrate MANIFEST --to TARGET`: import + compile in one step, with what the target cannot carry.

What is lost on the way, each with its field path:
- what import itself cannot carry (`Context.losses`: a renamed task, a guessed framework...);
- the source's patches, when TARGET is not the source's target: they address the source's
  compiled object (`/spec/tfReplicaSpecs/...`), which the new target does not have;
- how the job behaves differently on TARGET (who writes the framework env, what a restart
  restarts), from the table below.  These are stated, not guessed from the field values.
Under --strict any of them is an error (exit 2) and nothing is written.
"""

from __future__ import annotations

import sys

from trainspec.compiler.errors import SpecError, SpecErrors

# (source target, new target) -> what changes in env and restart semantics, always
CHANGES: dict[tuple[str, str], tuple[str, ...]] = {
    ("kubeflow", "jobset"): (
        "env: the training operator injects the framework variables (TF_CONFIG, MASTER_ADDR/RANK/WORLD_SIZE, "
        "DMLC_*, the MPI hostfile) when it creates each pod; on jobset trainspec writes them into the pod templates "
        "(per-replica parts from the completion index), so they are visible in the manifest and fixed at compile "
        "time",
        "restart: the operator restarts one failed replica's pod (replica restartPolicy, backoffLimit counts "
        "pod restarts); JobSet restarts the whole set of Jobs (failurePolicy.maxRestarts), every replica at once",
        "names: replicas are <job>-<role>-0-<i>.<job> (JobSet DNS), not the operator's <job>-<type>-<i>",
    ),
    ("kubeflow", "k8s"): (
        "env: the framework variables are written into each replica's Job by trainspec instead of injected by the "
        "training operator",
        "restart: each replica is its own batch/v1 Job (backoffLimit per replica); nothing restarts or fails the "
        "other replicas when one fails",
    ),
    ("kubeflow", "volcano"): (
        "env: the Volcano plugins (env, svc, and the framework's) or trainspec write the framework variables, "
        "not the training operator",
        "restart: Volcano policies (PodFailed/PodEvicted -> RestartJob) restart the whole job; the operator "
        "restarts single replicas",
    ),
    ("kubeflow", "trainjob"): (
        "env: Kubeflow Trainer v2 injects its own variables (PET_* for torch, OMPI_*/hostfile for MPI) through the "
        "runtime; the v1 operator's (MASTER_ADDR/RANK...) differ",
        "restart: Trainer runs a JobSet: a failure restarts the whole set (failurePolicy), not one replica",
    ),
    ("volcano", "jobset"): (
        "env: Volcano's env/svc plugins (VC_*, /etc/volcano/<task>.host) are gone; trainspec writes its own "
        "TRAINSPEC_* and framework variables",
        "restart: Volcano policies become JobSet failurePolicy; gang scheduling needs Kueue instead of the "
        "Volcano scheduler",
    ),
    ("volcano", "k8s"): (
        "env: Volcano's env/svc plugins (VC_*, /etc/volcano/<task>.host) are gone; trainspec writes its own",
        "restart: no job-level policies: each replica is its own batch/v1 Job; no gang scheduling without Kueue",
    ),
    ("volcano", "kubeflow"): (
        "env: Volcano's env/svc plugins (VC_*, /etc/volcano/<task>.host) are gone; the operator injects its own",
        "restart: Volcano policies become the operator's per-replica restartPolicy and runPolicy.backoffLimit",
    ),
}
# What a command or env value may read that only some targets provide: (marker, targets, what it is).
PROVIDED = (
    ("/etc/volcano/", ("volcano",), "the host files of Volcano's svc plugin"),
    ("VC_", ("volcano",), "the variables of Volcano's env/svc plugins"),
    ("VK_TASK_INDEX", ("volcano",), "the task index of Volcano's env plugin"),
    ("JOB_COMPLETION_INDEX", ("k8s", "jobset", "trainjob"), "the Indexed Job's completion index"),
    ("PAI_", (), "OpenPAI's runtime variables"),
)
GENERIC_CHANGE = ("the target runs the job with its own controller: env injection, host names and restart "
                  "behaviour follow {target}, not the source's operator")


def run(manifest: str, job: str | None, target: str, strict: bool, output: str,
        runtime: list[str] | None = None) -> int:
    from trainspec.compiler import UsageError
    from trainspec.output import write_atomic
    from trainspec.targets import TARGETS

    from . import import_text
    from .reading import read_manifest
    from .verify import compile_text

    if target not in TARGETS:
        raise UsageError(f"--to {target}: unknown target; one of {', '.join(TARGETS)}")
    if target == "helm":
        raise UsageError("--to helm writes a chart folder: `trainspec import` the job, then "
                         "`trainspec compile SPEC --target helm -o DIR`")
    text, source = read_manifest(manifest)
    if not text.strip():
        raise SpecErrors([SpecError(source, 1, 1, "", "the manifest is empty", "a training job")])
    imported = import_text(text, source, job, strict=False, runtime=runtime)
    spec_text, lost = imported.text, list(imported.lost)
    if target != imported.target and "patches" in imported.spec["spec"]:
        for path, line, column, why in imported.patched:
            lost.append(SpecError(source, line, column, path, f"{why}; its patch addresses the "
                                  f"{imported.target} output and is not carried to {target}", "", ""))
        spec_text = _without_patches(imported)
    changes = [] if target == imported.target else \
        list(CHANGES.get((imported.target, target), (GENERIC_CHANGE.format(target=target),)))
    changes += _unprovided(imported.spec["spec"], target)
    if runtime and target == "trainjob" and "trainjob" not in imported.spec["spec"]:
        from .on_runtime import on_runtime  # a TrainJob on the given runtime, and what the runtime changes

        _, spec_text, more_lost, runtime_changes, files = on_runtime(imported.spec, runtime, source, compile_text)
        lost += more_lost
        changes = [c for c in changes if not c.startswith("env:")] + runtime_changes
    else:  # a TrainJob's spec on jobset/k8s: expanded on the runtime given, else the one Trainer ships (noted)
        notes: list[SpecError] = []
        files = compile_text(spec_text, target, f"{source} (imported)", tuple(runtime or ()), notes)
        for note in notes:
            print(f"trainspec: note: {source}: {note.message}", file=sys.stderr)
    if strict and (lost or changes):
        raise SpecErrors(lost + [SpecError(source, 1, 1, "", f"on {target}: {c}", "", "") for c in changes])
    for error in lost:
        print(f"trainspec: lost: {error.format()}", file=sys.stderr)
    for change in changes:
        print(f"trainspec: changes on {target}: {change}", file=sys.stderr)
    out = "".join(files.values())
    if output == "-":
        sys.stdout.write(out)
    else:
        write_atomic(output, out)
    return 0


def _unprovided(spec: dict, target: str) -> list[str]:
    """Commands and env that read what `target` does not provide (a Volcano host file on a JobSet...)."""
    import json

    out = []
    roles = spec.get("roles") or {}
    parts = {"": {k: spec.get(k) for k in ("command", "args", "env")},
             **{r: {k: (body or {}).get(k) for k in ("command", "args", "env")} for r, body in roles.items()}}
    for role, fields in parts.items():
        text = json.dumps(fields)
        for marker, targets, what in PROVIDED:
            if marker in text and target not in targets:
                where = f"role {role}" if role else "the job"
                out.append(f"{where} reads {marker}... ({what}), which {target} does not provide")
    return out


def _without_patches(imported) -> str:
    import yaml

    spec = {**imported.spec, "spec": {k: v for k, v in imported.spec["spec"].items() if k != "patches"}}
    return yaml.safe_dump(spec, sort_keys=False)
