"""The operator job kinds trainspec reads and writes, and the registry that names them.

One module per kind's home (`compiler/kinds/<name>.py`): Kubeflow's operators (`kubeflow`: the
training operator's v1 jobs and the mpi-operator's MPIJob), `volcano`, `jobset`, `trainjob` (the
TrainJob and its runtimes), `batch` (an Indexed Job) and `openpai` (a job config, no Kubernetes
kind).  Each holds its kinds' identity (`OperatorKind`: group, version, kind, plural, replica
types, what installs it) and `matches(doc)`; the importer, the emulator's readers, the cluster
commands and the targets read it here, so a kind's group/version and name are spelled in its
module only.  Adding an input kind is a module and one line in `KINDS` (tests/compiler/test_kind_registry.py
adds a throwaway one so).

A kind's shape is its schema, found by its identity: its CRD's structural schema
(compiler/apiserver/crds/<group>_<version>_<Kind>.json) or, for a built-in kind, its OpenAPI definition;
compiler/apiserver `refusals` checks a document read from outside with it (the importer and the emulator
call it, and the targets' written objects pass the same checks).  OpenPAI, no Kubernetes kind, has its
`SCHEMA` in its module, walked the same way.

A module may also have `admitted(doc)`: the object as its operator's mutating webhook leaves it, which the
API server applies before its checks (compiler/apiserver `refusals` does the same).

Each module also says where the kind's readers live (`READERS`: the importer, the emulator's
controller, the cluster's status reader, as "module:attribute" strings; "" where there is none), and
the importer, the emulator and the cluster commands find them through `reader()`, never by a table of
their own.  What differs per consumer stays with it (a controller's default port, the importer's
aliases).  The registry loads a module when a kind of it is asked for, as `trainspec.targets.TARGETS`
does, and a reader's module when it is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any, Literal, NamedTuple

# name -> the module that holds those kinds.  Order: the order documents are matched in.
KINDS: dict[str, str] = {
    "kubeflow": "trainspec.compiler.kinds.kubeflow",
    "volcano": "trainspec.compiler.kinds.volcano",
    "jobset": "trainspec.compiler.kinds.jobset",
    "trainjob": "trainspec.compiler.kinds.trainjob",
    "batch": "trainspec.compiler.kinds.batch",
    "openpai": "trainspec.compiler.kinds.openpai",
}


class OperatorKind(NamedTuple):
    kind: str
    api_version: str  # group/version ("v1" for the core group)
    plural: str
    framework: str = ""  # the spec's framework the kind runs ("" when any, or none)
    replica_specs: str = ""  # the field that holds {replica type: replica spec}
    replica_types: tuple[tuple[str, str], ...] = ()  # (role, the operator's replica type), in the operator's order
    provider: str = ""  # what installs the kind on a cluster ("" for a built-in kind)
    namespaced: bool = True
    instead: str = ""  # a target that runs the job without `provider` (the cluster commands' hint)

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def type_of_role(self) -> dict[str, str]:
        return dict(self.replica_types)

    def matches(self, doc: Any) -> bool:
        """`doc` is an object of this kind, at any version of its group (a reader says which it reads)."""
        return isinstance(doc, dict) and doc.get("kind") == self.kind \
            and group_of(str(doc.get("apiVersion", ""))) == self.group


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def module(name: str) -> Any:
    """The module of registry entry `name` (its `KINDS` and `matches`)."""
    return importlib.import_module(KINDS[name])


def kinds(name: str) -> tuple[OperatorKind, ...]:
    """The kinds of registry entry `name`."""
    return module(name).KINDS


def kind(name: str, kind_name: str) -> OperatorKind:
    """One kind of registry entry `name` by its kind name (`kind("jobset", "JobSet")`)."""
    return next(k for k in kinds(name) if k.kind == kind_name)


class Readers(NamedTuple):
    """Where a registry entry's readers live: "module:attribute", "" when it has none.

    importer: `import_job(ctx, data, docs, runtime_paths) -> spec` (trainspec.importer);
    controller: `controller(doc) -> make | None`, make(doc, source, docs, runtimes) -> Created (the emulator);
    status: `expected(obj, add)`, calling add(role, count, fixed index | None) per replica group (the cluster's
    `ps`)."""

    importer: str = ""
    controller: str = ""
    status: str = ""


Role = Literal["importer", "controller", "status"]


def reader(name: str, role: Role) -> Any | None:
    """Registry entry `name`'s reader for `role`, its module loaded now; None when the entry has none."""
    where = getattr(getattr(module(name), "READERS", Readers()), role)
    if not where:
        return None
    path, _, attribute = where.partition(":")
    return getattr(importlib.import_module(path), attribute)


def entry_of(doc: Any) -> str | None:
    """The registry entry one of whose kinds `doc` is (a TrainingRuntime's too, which `source_of` leaves out)."""
    for name in KINDS:
        if matching(kinds(name), doc) or module(name).matches(doc):
            return name
    return None


def admitted(doc: Any) -> Any:
    """`doc` as its operator's mutating admission webhook leaves it (the module's `admitted`, when it has
    one), which the API server applies before it validates the object: a new object, `doc` unchanged."""
    name = entry_of(doc)
    defaults = getattr(module(name), "admitted", None) if name is not None else None
    return defaults(doc) if defaults is not None else doc


def source_of(doc: Any) -> str | None:
    """The registry entry whose kinds this document is (kubeflow, volcano, ...), or None."""
    for name in KINDS:
        if module(name).matches(doc):
            return name
    return None


def matching(found: tuple[OperatorKind, ...], doc: Any) -> bool:
    """A module's `matches`: `doc` is one of `found`."""
    return any(k.matches(doc) for k in found)
