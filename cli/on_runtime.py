"""A spec v1.3 job on a Kubeflow Trainer runtime, for the commands that need the runtime's pods.

The emulator runs what it reads and never renders a target, so `trainspec run SPEC [--runtime FILE]` gets
the objects from here: the spec planned for the jobset target with the runtime's definition (given, or one
Kubeflow Trainer ships), and that target's expansion of the TrainJob on the runtime
(targets/jobset/render.py `on_runtime_objects`, from compiler/runtimes.py), as the Trainer controller would
create them.
"""

from __future__ import annotations

from trainspec.compiler.errors import UsageError


def spec_objects(path: str, runtimes: tuple[str, ...], job: str | None, args) -> tuple[list[dict], list[str]]:
    """The objects, and the plan's notes (a runtime's definition taken from the ones Trainer ships)."""
    from trainspec.targets import load_plans
    from trainspec.targets.jobset.render import on_runtime_objects

    def pairs(values) -> dict[str, str]:  # `run`'s --tla/--ext-var are NAME=VALUE strings
        return dict(v.split("=", 1) if "=" in v else (v, "") for v in values or [])

    options = {"tla": pairs(getattr(args, "tla", None)), "ext_vars": pairs(getattr(args, "ext_var", None)),
               "jpath": list(getattr(args, "jpath", None) or [])}
    plans = load_plans(path, targets=("jobset",), runtimes=tuple(runtimes), **options)
    if job is not None:
        plans = [p for p in plans if p.name == job]
        if not plans:
            raise UsageError(f"{path}: no job named {job!r}")
    if len(plans) > 1:
        raise UsageError(f"{path} defines {len(plans)} jobs ({', '.join(p.name for p in plans)}); "
                         "choose one with --job NAME")
    return on_runtime_objects(plans[0]), [f"note: {note.format()}" for note in plans[0].notes]
