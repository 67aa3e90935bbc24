"""What `trainspec run` needs rendered of a spec: a spec v1.3 job on a Kubeflow Trainer runtime (the
runtime's pods), and a spec with k8s patches (its k8s output, patches applied).

The emulator runs what it reads and never renders a target, so `trainspec run SPEC [--runtime FILE]` gets
the objects from here: the spec planned for the jobset target with the runtime's definition (given, or one
Kubeflow Trainer ships), and that target's expansion of the TrainJob on the runtime
(targets/jobset/render.py `on_runtime_objects`, from compiler/runtimes.py), as the Trainer controller would
create them.
"""

from __future__ import annotations


def install(args) -> None:
    """The callbacks `trainspec run` (the command and `trainspec.run`) hands the emulator, which never renders
    a target: a spec on a Trainer runtime, and a spec with k8s patches."""
    args.spec_on_runtime = lambda path, runtimes, job: spec_objects(path, runtimes, job, args)
    args.spec_patched = patched_objects


def spec_objects(path: str, runtimes: tuple[str, ...], job: str | None, args) -> tuple[list[dict], list[str]]:
    """The objects, and the plan's notes (a runtime's definition taken from the ones Trainer ships)."""
    from trainspec.emulator.readers.dispatch import plan_spec  # `--set` edits first, as a plain spec run
    from trainspec.targets.jobset.render import on_runtime_objects

    def pairs(values) -> dict[str, str]:  # `run`'s --tla/--ext-var are NAME=VALUE strings
        return dict(v.split("=", 1) if "=" in v else (v, "") for v in values or [])

    plan = plan_spec(path, pairs(getattr(args, "tla", None)), pairs(getattr(args, "ext_var", None)),
                     list(getattr(args, "jpath", None) or []), job, "jobset", tuple(runtimes))
    return on_runtime_objects(plan), [f"note: {note.format()}" for note in plan.notes]


def patched_objects(plan) -> list[dict]:
    """The k8s output of a spec whose `patches.k8s` change its objects, patches applied, as `build` writes it:
    the plan alone would run the objects before the patches (a silent change)."""
    import yaml

    from trainspec.targets import render

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for text in render("k8s", plan).values() for d in yaml.load_all(text, Loader=loader)
            if isinstance(d, dict)]
