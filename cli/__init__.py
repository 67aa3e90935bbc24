"""trainspec: one distributed-training job spec in, every deployment format out.

The Python API (docs/api.md): `load`, `loads`, `validate`, `Job.compile` / `Job.objects`,
`import_manifest`, `run`, `TARGETS`, and the errors: `Error` above every error trainspec raises,
`SpecError(Error)` with `.problems` (each a `Problem`: file, line, column, path, message, expected,
hint), `UsageError(Error)`.  Names load on first use (module `__getattr__`): `import trainspec`
imports nothing but this file, and the CLI's start-up pays nothing for the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from trainspec.api import Job, import_manifest, load, loads, validate
    from trainspec.compiler.errors import Error, Problem, UsageError
    from trainspec.compiler.errors import SpecErrors as SpecError
    from trainspec.importer import Imported
    from trainspec.localrun import LocalRun, ReplicaStatus, RunStatus, run

    TARGETS: tuple[str, ...]

# Public name -> (module, its name there).
_LAZY = {
    "load": ("trainspec.api", "load"), "loads": ("trainspec.api", "loads"),
    "validate": ("trainspec.api", "validate"), "import_manifest": ("trainspec.api", "import_manifest"),
    "run": ("trainspec.localrun", "run"), "Job": ("trainspec.api", "Job"),
    "Imported": ("trainspec.importer", "Imported"),
    "LocalRun": ("trainspec.localrun", "LocalRun"), "RunStatus": ("trainspec.localrun", "RunStatus"),
    "ReplicaStatus": ("trainspec.localrun", "ReplicaStatus"), "Problem": ("trainspec.compiler.errors", "Problem"),
    "Error": ("trainspec.compiler.errors", "Error"), "SpecError": ("trainspec.compiler.errors", "SpecErrors"),
    "UsageError": ("trainspec.compiler.errors", "UsageError"),
}


def __getattr__(name: str) -> Any:
    if name == "TARGETS":  # read from the registry each time: a target registered later is listed
        from trainspec.api import targets

        return targets()
    where = _LAZY.get(name)
    if where is None:  # AttributeError lets `from trainspec import cli` import the submodule
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where[0]), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "TARGETS"})


__all__ = ["TARGETS", "Error", "Imported", "Job", "LocalRun", "Problem", "ReplicaStatus", "RunStatus", "SpecError",
           "UsageError", "__version__", "import_manifest", "load", "loads", "run", "validate"]
