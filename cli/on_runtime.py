"""What `trainspec run` needs rendered of a spec: a spec v1.3 job on a Kubeflow Trainer runtime (the
runtime's pods), and a spec with k8s patches (its k8s output, patches applied).

The emulator runs what it reads and never renders a target, so `trainspec run SPEC [--runtime FILE]` gets
the objects from here: the spec planned for the jobset target with the runtime's definition (given, or one
Kubeflow Trainer ships), and that target's expansion of the TrainJob on the runtime
(targets/jobset/render.py `on_runtime_objects`, from compiler/runtimes.py), as the Trainer controller would
create them.
"""

from __future__ import annotations

from trainspec.compiler.errors import UsageError


def install(args) -> None:
    """The callbacks `trainspec run` (the command and `trainspec.run`) hands the emulator, which never renders
    a target: a spec on a Trainer runtime, and a spec with k8s patches."""
    args.spec_on_runtime = lambda path, runtimes, job: spec_objects(path, runtimes, job, args)
    args.spec_patched = lambda path, job: patched_objects(path, job, args)


def _plan(path: str, job: str | None, args, target: str, runtimes: tuple[str, ...] = ()):
    # the emulator's load_plans: the spec edited by the run's `--set` arguments first, as a plain spec run is
    from trainspec.emulator.readers.overrides import load_plans

    def pairs(values) -> dict[str, str]:  # `run`'s --tla/--ext-var are NAME=VALUE strings
        return dict(v.split("=", 1) if "=" in v else (v, "") for v in values or [])

    options = {"tla": pairs(getattr(args, "tla", None)), "ext_vars": pairs(getattr(args, "ext_var", None)),
               "jpath": list(getattr(args, "jpath", None) or [])}
    plans = load_plans(path, targets=(target,), runtimes=runtimes, **options)
    if job is not None:
        plans = [p for p in plans if p.name == job]
        if not plans:
            raise UsageError(f"{path}: no job named {job!r}")
    if len(plans) > 1:
        raise UsageError(f"{path} defines {len(plans)} jobs ({', '.join(p.name for p in plans)}); "
                         "choose one with --job NAME")
    return plans[0]


def spec_objects(path: str, runtimes: tuple[str, ...], job: str | None, args) -> tuple[list[dict], list[str]]:
    """The objects, and the plan's notes (a runtime's definition taken from the ones Trainer ships)."""
    from trainspec.targets.jobset.render import on_runtime_objects

    plan = _plan(path, job, args, "jobset", tuple(runtimes))
    return on_runtime_objects(plan), [f"note: {note.format()}" for note in plan.notes]


def patched_objects(path: str, job: str | None, args) -> list[dict] | None:
    """A spec whose `patches.k8s` change its objects runs as its k8s output with them applied, as `build`
    writes it: the plan alone would run the objects before the patches (a silent change).  None when the
    spec has no k8s patches (a Jsonnet spec's are known only once it is evaluated)."""
    import yaml

    from trainspec.targets import render

    plan = _plan(path, job, args, "k8s")
    if not plan.patches.get("k8s"):
        return None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for text in render("k8s", plan).values() for d in yaml.load_all(text, Loader=loader)
            if isinstance(d, dict)]
