"""Compile an imported spec in memory: the check that every import validates, and what it compiles to.

Import compares the compiled job with its source where trainspec writes something of its own
(Volcano policies), and `migrate` is import + this.  Nothing here touches the disk.
"""

from __future__ import annotations

from trainspec.compiler.errors import SpecError, SpecErrors

SPEC_NAME = "<imported spec>"


def compile_text(text: str, target: str, name: str = SPEC_NAME, runtimes: tuple[str, ...] = (),
                 notes: list | None = None) -> dict[str, str]:
    """{relative path: text} as `trainspec compile --target` writes it; SpecErrors as validate reports them.
    `runtimes`: --runtime FILE|DIR; `notes` collects the plan's (a Trainer runtime's shipped definition used)."""
    from trainspec.compiler.loader import from_yaml_text
    from trainspec.targets import load_plans, render

    (plan,) = load_plans(name, targets=(target,), documents=from_yaml_text(name, text), runtimes=tuple(runtimes))
    if notes is not None:
        notes.extend(plan.notes)
    return render(target, plan)


def job_objects(files: dict[str, str]) -> list[dict]:
    import yaml

    return [d for text in files.values() if text.lstrip().startswith(("apiVersion", "#", "---", "kind"))
            for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def checked_compile(text: str, target: str, source: str) -> dict[str, str]:
    """compile_text, with an invalid imported spec reported against the manifest (an importer gap, exit 2)."""
    try:
        return compile_text(text, target)
    except SpecErrors as errors:
        raise SpecErrors([SpecError(source, 1, 1, "", "the spec imported from this manifest does not compile "
                                    f"to {target}: {e.format()}", "a manifest whose values trainspec accepts",
                                    "fix the value in the manifest if it is wrong there too (the cluster would "
                                    "reject it); else this is an importer gap: please report it")
                          for e in errors.errors]) from None
