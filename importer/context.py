"""What one import collects: the spec being built, the choices it made and the fields it could not map."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainspec.compiler.errors import ErrorSink, SpecError, SpecErrors, dotted
from trainspec.compiler.loader import Document


@dataclass(frozen=True)
class Unmapped:
    """A manifest field with no spec field: one JSON-patch op against the compiled output carries it."""

    path: tuple  # where it is in the manifest (for line:column)
    op: dict  # the RFC 6902 op, path relative to the compiled job object
    why: str = "no spec field"


@dataclass(frozen=True)
class Loss:
    """A manifest field that would not survive import + compile: no spec field and no patch carries it."""

    path: tuple
    why: str


@dataclass
class Context:
    """One import: the source document, the target its patches apply to, and what was noticed on the way."""

    doc: Document
    target: str  # kubeflow | volcano
    unmapped: list[Unmapped] = field(default_factory=list)
    losses: list[Loss] = field(default_factory=list)
    comments: list[tuple[tuple, str]] = field(default_factory=list)  # (spec path, comment)
    v11: set[str] = field(default_factory=set)  # the v1.1 features the spec uses
    role_paths: dict[str, tuple] = field(default_factory=dict)  # role -> manifest path of its replica spec/task
    # Pointers the compiled output will not have (e.g. no volumeMounts when no volume maps): the first
    # op into one adds it whole, so every op applies.
    absent: set[str] = field(default_factory=set)
    # Volcano: the compiled task indexes of one role's task when the target writes one task per replica
    # (targets/volcano/checks.py volcano_node_rank_split); a patch into that task applies to each.
    task_copies: dict[int, list[int]] = field(default_factory=dict)
    patchable: bool = True  # False: the source's target output has no place for a patch (trainjob)
    job_name: str = ""  # the job's name when it is not the document's (the k8s target's per-replica Jobs)
    group: list = field(default_factory=list)  # the k8s target's per-replica Jobs of one job (batch.py)
    foreign: bool = False  # batch.py: a Job trainspec did not write (its k8s output is patched to it, by file index)
    service: dict | None = None  # batch.py: that Job's headless Service (its pods' subdomain), when in the file
    task_names: dict[str, str] = field(default_factory=dict)  # role -> the upstream task name it keeps
    compiled_index: dict[str, int] = field(default_factory=dict)  # Volcano: role -> its task in trainspec's order

    def position(self, path: tuple) -> tuple[int, int]:
        return ErrorSink(self.doc.file, self.doc.positions, self.doc.key_positions).position(path, at_key=True)

    def unmap(self, path: tuple, op: str, pointer: str, value=None, why: str = "no spec field") -> None:
        if not self.patchable:  # the target builds the object from its own runtime: no patch reaches it
            self.lose(path, why)
            return
        body = {"op": op, "path": pointer}
        if op != "remove":
            body["value"] = value
        self.unmapped.append(Unmapped(path, body, why))

    def lose(self, path: tuple, why: str) -> None:
        self.losses.append(Loss(path, why))

    def patch_ops(self) -> list[dict]:
        """The ops in manifest order; an op into an absent list or object creates it instead."""
        out = []
        absent = set(self.absent)
        for item in self.unmapped:
            op = dict(item.op)
            appends = op["path"].endswith("/-")
            parent, _, key = op["path"].rpartition("/")
            if op["op"] == "add" and parent in absent:
                absent.discard(parent)
                op["value"] = [op["value"]] if appends else {key: op["value"]}
                op["path"] = parent
            out.extend(self._copies(op))
        return out

    def _copies(self, op: dict) -> list[dict]:
        parts = op["path"].split("/")
        if len(parts) < 4 or parts[1:3] != ["spec", "tasks"] or not parts[3].isdigit():
            return [op]
        return [dict(op, path="/".join(parts[:3] + [str(k)] + parts[4:]))
                for k in self.task_copies.get(int(parts[3]), [int(parts[3])])]

    def comment(self, spec_path: tuple, text: str) -> None:
        self.comments.append((spec_path, text))

    def uses(self, feature: str) -> None:
        self.v11.add(feature)

    def fail(self, path: tuple, message: str, expected: str = "", hint: str = "") -> SpecErrors:
        line, column = self.position(path)
        return SpecErrors([SpecError(self.doc.file, line, column, dotted(path), message, expected, hint)])

    # --- what the user is told --------------------------------------------------------------
    def warnings(self) -> list[str]:
        """One line per field path carried as a patch or lost, in manifest order."""
        out, seen = [], set()
        items: list = [*self.unmapped, *self.losses]
        for item in sorted(items, key=lambda u: (self.position(u.path), isinstance(u, Loss))):
            if (item.path, type(item), item.why) in seen:  # one line per field and reason (task copies share)
                continue
            seen.add((item.path, type(item), item.why))
            line, column = self.position(item.path)
            what = "NOT IMPORTED (lost)" if isinstance(item, Loss) else \
                f"imported as a patch (spec.patches.{self.target})"
            out.append(f"trainspec: warning: {self.doc.file}:{line}:{column}: {dotted(item.path)}: {item.why}; {what}")
        return out

    def strict_errors(self) -> SpecErrors:
        """--strict: every field that would not survive import + compile, all at once."""
        errors = []
        for item in sorted(self.losses, key=lambda u: self.position(u.path)):
            line, column = self.position(item.path)
            errors.append(SpecError(self.doc.file, line, column, dotted(item.path), item.why,
                                    "a field the spec or a patch carries unchanged (--strict)",
                                    "without --strict it is left out, with a warning"))
        return SpecErrors(errors)
