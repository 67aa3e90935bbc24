"""What changed between two compiled jobs, in words a reviewer reads.

It compares compiled objects (what `kubectl apply` would see), not the spec or
the plan, so it works on committed files as well as fresh ones: per role the
replica count, objects that appear or go, and per replica its container
environment with the topology ConfigMap and `$(VAR)` references expanded.
Structured values (TF_CONFIG's JSON, comma-separated host lists) are compared
element by element, and identical changes across replicas are told once:
"TF_CONFIG cluster.worker gains tf-ps-worker-4:2222 in 7 replicas".
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

ROLE_LABEL = "app.kubernetes.io/component"
REPLICA_KINDS = ("Job", "Deployment", "Pod", "StatefulSet")
DOCUMENT = "document -"
CORE_API_VERSIONS = ("v1", "batch/v1", "apps/v1")  # a Volcano `Job` is one object for the whole job
_SHORT = 60
INDEX_FIELDS = ("metadata.annotations['batch.kubernetes.io/job-completion-index']",
                "metadata.labels['batch.kubernetes.io/job-completion-index']",
                "metadata.labels['apps.kubernetes.io/pod-index']")


@dataclass
class Change:
    job: str
    file: str
    subject: str  # "worker replicas", "TF_CONFIG cluster.worker", "Service tf-ps-worker-4", ...
    change: str  # changed | gains | loses | new | removed
    old: object = None
    new: object = None
    where: list[str] = field(default_factory=list)  # the replicas/objects it happened in

    def text(self) -> str:
        if self.change == "new" or self.change == "removed":
            return f"{self.change} {self.subject}"
        if self.change == "changed" and self.old is None and self.new is None:
            return f"{self.subject} changed"
        if self.change == "changed":
            body = f"{self.subject} {_short(self.old)} → {_short(self.new)}"
        else:
            values = self.new if self.change == "gains" else self.old
            items = ", ".join(_short(v) for v in (values if isinstance(values, list) else [values]))
            body = f"{self.subject} {self.change} {items}"
        if len(self.where) > 1:
            roles = all(" " in w for w in self.where)  # "TFJob x Worker": roles of an operator resource
            return f"{body} in {len(self.where)} {'roles' if roles else 'replicas'}"
        if self.where:
            return f"{body} in {self.where[0]}"
        return body

    def as_json(self) -> dict:
        return dict(asdict(self), text=self.text())


def _short(value) -> str:
    if value is None:
        return "(unset)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = text.replace("\n", "⏎")
    return text if len(text) <= _SHORT else text[:_SHORT - 1] + "…"


# --- reading compiled files --------------------------------------------------------------------

def parse_objects(text: str, name: str = "<compiled file>") -> dict[str, dict]:
    """'Kind name' -> object for a Kubernetes multi-document file; 'service name' for a compose file."""
    from trainspec.compiler.limits import MAX_OUTPUT_BYTES
    from trainspec.compiler.loader import yaml_values

    objects: dict[str, dict] = {}
    # The loader's bounds (a revision's file is someone else's text), at the size a target may write.
    for doc in yaml_values(name, text, MAX_OUTPUT_BYTES):
        if not isinstance(doc, dict):
            continue
        if "services" in doc and "kind" not in doc:
            for name, service in (doc.get("services") or {}).items():
                objects[f"service {name}"] = service if isinstance(service, dict) else {}
            continue
        if "kind" not in doc:  # a chart's values.yaml or Chart.yaml: one document, no object name
            objects[DOCUMENT] = doc
            continue
        name = (doc.get("metadata") or {}).get("name", "?")
        objects[f"{doc['kind']} {name}"] = doc
    return objects


def _topology(objects: dict[str, dict]) -> dict[str, dict[str, str]]:
    return {key.split(" ", 1)[1]: obj.get("data") or {} for key, obj in objects.items()
            if key.startswith("ConfigMap ")}


def _env_of(container: dict, maps: dict[str, dict[str, str]], skip: set[str] | None = None) -> dict[str, object]:
    """A container's environment as the process sees it (the kubelet's expansion, references resolved).

    Names that come straight from a ConfigMap of the file go into `skip`: the
    ConfigMap's own change already tells them, once rather than once per replica.
    """
    from trainspec.compiler.plan import expand_references

    env = container.get("env") or container.get("environment") or {}
    if isinstance(env, dict):  # compose
        return {str(k): ("" if v is None else str(v)) for k, v in env.items()}
    values: dict[str, str] = {}
    out: dict[str, object] = {}
    for item in env:
        if not isinstance(item, dict) or "name" not in item:
            continue
        name = item["name"]
        if "value" in item:
            text = expand_references(str(item["value"]), values)
        else:
            source = item.get("valueFrom") or {}
            ref = source.get("configMapKeyRef")
            if ref and ref.get("key") in maps.get(ref.get("name"), {}):
                text = maps[ref["name"]][ref["key"]]
                if skip is not None:
                    skip.add(name)
            else:
                kind, body = next(iter(source.items()), ("valueFrom", {}))
                out[name] = f"<{kind} {json.dumps(body, sort_keys=True, default=str)}>"
                values.pop(name, None)
                if isinstance(body, dict) and str(body.get("fieldPath", "")) in INDEX_FIELDS:
                    # one template for a role's replicas (k8s v1.3, JobSet): values built on the index
                    # (TF_CONFIG's task) compare as replica 0's, so their JSON stays JSON
                    values[name] = "0"
                continue
        values[name] = text
        out[name] = text
    return out


def _containers(obj: dict, path: str = "") -> list[tuple[str, dict]]:
    """(where, container) for every container in an object (pod templates, replica specs, compose)."""
    found: list[tuple[str, dict]] = []
    if "image" in obj and "containers" not in obj and ("environment" in obj or "command" in obj or not path):
        return [(path, obj)]
    for key, value in obj.items():
        if key in ("containers", "initContainers") and isinstance(value, list):
            for c in value:
                if isinstance(c, dict):
                    found.append((f"{path}{key}[{c.get('name', '?')}]", c))
        elif isinstance(value, dict):
            found.extend(_containers(value, f"{path}{key}."))
        elif isinstance(value, list) and key == "tasks":  # volcano
            for task in value:
                if isinstance(task, dict):
                    found.extend(_containers(task, f"{path}{key}[{task.get('name', '?')}]."))
    return found


def _flatten(value, path: str, out: dict[str, object]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in ("env", "environment"):
                continue  # compared as environments, with references resolved
            _flatten(inner, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        for item in value:
            _flatten(item, f"{path}[{item['name']}]", out)
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", out)
    else:
        out[path] = value


def _readable(path: str) -> str:
    for noise in ("spec.template.spec.", "template.spec.", "spec.template."):
        path = path.replace(noise, "")
    return path


def _structured(text):
    if isinstance(text, str) and text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            return None
    return None


def _value_changes(subject: str, old, new, emit) -> None:
    """Compare two values; JSON text and comma lists element by element."""
    if old == new:
        return
    a, b = _structured(old), _structured(new)
    if a is not None and b is not None:
        _deep(subject, a, b, emit, " ")
        return
    if isinstance(old, str) and isinstance(new, str) and "," in old + new and " " not in old + new:
        _list_changes(subject, old.split(","), new.split(","), old, new, emit)
        return
    if isinstance(old, list) and isinstance(new, list):
        _list_changes(subject, old, new, old, new, emit)
        return
    emit(subject, "changed", old, new)


def _list_changes(subject, old_items, new_items, old, new, emit) -> None:
    hashable = all(isinstance(v, (str, int, float, bool, type(None))) for v in old_items + new_items)
    if not hashable:
        emit(subject, "changed", old, new)
        return
    gained = [v for v in new_items if v not in old_items]
    lost = [v for v in old_items if v not in new_items]
    if gained:
        emit(subject, "gains", None, gained)
    if lost:
        emit(subject, "loses", lost, None)
    if not gained and not lost:
        emit(subject, "changed", old, new)  # same elements, new order


def _deep(subject: str, a, b, emit, sep: str = ".") -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            inner = f"{subject}{sep}{key}"
            if key not in b:
                emit(inner, "removed", a[key], None)
            elif key not in a:
                emit(inner, "changed", None, b[key])
            else:
                _deep(inner, a[key], b[key], emit)
    elif isinstance(a, list) and isinstance(b, list):
        _list_changes(subject, a, b, a, b, emit)
    elif a != b:
        emit(subject, "changed", a, b)


# --- comparing ---------------------------------------------------------------------------------

def _role_counts(objects: dict[str, dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key, obj in objects.items():
        kind = key.split(" ", 1)[0]
        role = ((obj.get("metadata") or {}).get("labels") or {}).get(ROLE_LABEL)
        spec = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
        if kind == "service":
            role = (obj.get("labels") or {}).get("trainspec.dev/role") if isinstance(obj.get("labels"), dict) \
                else None
        core = kind == "service" or obj.get("apiVersion") in CORE_API_VERSIONS
        if role and core and kind in REPLICA_KINDS + ("service",):
            counts[role] = counts.get(role, 0) + _pods(kind, spec)
    return counts


def _pods(kind: str, spec: dict) -> int:
    """Replicas one k8s object runs: an Indexed Job's completions, a StatefulSet's replicas, else one."""
    count = spec.get("completions") if kind == "Job" and spec.get("completionMode") == "Indexed" else \
        spec.get("replicas") if kind == "StatefulSet" else 1
    return count if isinstance(count, int) else 1


def diff_texts(old_text: str, new_text: str, job: str = "", file: str = "") -> list[Change]:
    """The changes from one compiled file to another, identical changes across replicas merged."""
    old, new = parse_objects(old_text, file or "<old>"), parse_objects(new_text, file or "<new>")
    if not old and not new:  # no objects to compare (a bare list or scalar): say only that it changed
        return [] if old_text == new_text else [Change(job, file, f"file {file or '(input)'}", "changed")]
    grouped: dict[tuple, Change] = {}
    order: list[tuple] = []

    def add(subject, change, before, after, where=None):
        key = (subject, change, json.dumps(before, sort_keys=True, default=str),
               json.dumps(after, sort_keys=True, default=str))
        if key not in grouped:
            grouped[key] = Change(job, file, subject, change, before, after)
            order.append(key)
        if where and where not in grouped[key].where:
            grouped[key].where.append(where)

    old_counts, new_counts = _role_counts(old), _role_counts(new)
    for role in list(old_counts) + [r for r in new_counts if r not in old_counts]:
        if old_counts.get(role, 0) != new_counts.get(role, 0):
            add(f"{role} replicas", "changed", old_counts.get(role, 0), new_counts.get(role, 0))
    for key in new:
        if key not in old:
            add(key, "new", None, None)
    for key in old:
        if key not in new:
            add(key, "removed", None, None)
    old_maps, new_maps = _topology(old), _topology(new)
    for key in [k for k in new if k in old]:
        name = key.split(" ", 1)[1]
        a_flat: dict[str, object] = {}
        b_flat: dict[str, object] = {}
        _flatten(old[key], "", a_flat)
        _flatten(new[key], "", b_flat)
        # A per-replica object (k8s Job, compose service) is told as "in N replicas"; an object for
        # the whole job (ConfigMap, TFJob, Volcano Job, a chart's values) is named in the subject.
        kind = key.split(" ", 1)[0]
        per_replica = kind in ("Service", "service") or (
            kind in REPLICA_KINDS and new[key].get("apiVersion") in CORE_API_VERSIONS)
        prefix, replica = ("", name) if per_replica else (("" if key == DOCUMENT else f"{key}: "), None)
        spec = new[key]["spec"] if isinstance(new[key].get("spec"), dict) else {}
        if per_replica and (kind == "StatefulSet" or spec.get("completionMode") == "Indexed"):
            replica = key  # a role's Indexed Job / StatefulSet (k8s from v1.3): told as "in N roles"

        def emit(subject, change, before, after, replica=replica):
            add(subject, change, before, after, replica)

        for path in list(a_flat) + [p for p in b_flat if p not in a_flat]:
            _value_changes(prefix + _readable(path), a_flat.get(path), b_flat.get(path), emit)
        a_containers = dict(_containers(old[key]))
        for place, container in _containers(new[key]):
            if place not in a_containers:
                continue
            if not per_replica:  # a role's pod template inside an operator's resource
                found = re.search(r"ReplicaSpecs\.([^.]+)\.|tasks\[([^\]]+)\]", place)
                where = f"{key} {(found.group(1) or found.group(2)) if found else place}"

                def emit(subject, change, before, after, where=where):
                    add(subject, change, before, after, where)
            told: set[str] = set()
            a_env, b_env = _env_of(a_containers[place], old_maps, told), _env_of(container, new_maps, told)
            for var in list(a_env) + [v for v in b_env if v not in a_env]:
                if var in told:
                    continue
                if var not in b_env:
                    emit(f"env {var}", "removed", a_env[var], None)
                elif var not in a_env:
                    emit(f"env {var}", "changed", None, b_env[var])
                else:
                    _value_changes(var, a_env[var], b_env[var], emit)
    return [grouped[k] for k in order]


def spec_objects(path: str, name: str | None = None) -> dict[str, str]:
    """job -> its compiled k8s text, for a spec file; errors name it `name` (e.g. HEAD:specs/x.yaml)."""
    from trainspec.targets import load_plans, render

    if name is None or name == path or path.endswith(".jsonnet"):
        plans = load_plans(path)
    else:
        from trainspec.compiler.loader import load_file

        docs = load_file(path)
        for doc in docs:
            doc.file = name  # a git revision's copy: its errors point at what the user named
        plans = load_plans(name, documents=docs)
    return {plan.name: "".join(render("k8s", plan).values()) for plan in plans}


def is_spec(path: str) -> bool:
    from trainspec.compiler import SpecErrors
    from trainspec.compiler.loader import load_file
    from trainspec.inputs import looks_like_trainspec

    if path.endswith(".jsonnet"):
        return True
    try:
        docs = load_file(path)
    except SpecErrors:
        return False
    return any(looks_like_trainspec(doc.data) for doc in docs)  # a typo'd header is a spec's error, not a file


def _folder_files(root: str) -> dict[str, str]:
    import os

    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "templates")
        for name in sorted(filenames):
            if name.endswith((".yaml", ".yml")) and not name.startswith("."):
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    found[os.path.relpath(path, root)] = path
    return found


def diff_paths(a: str | None, b: str | None, a_name: str | None = None, b_name: str | None = None) -> list[Change]:
    """Two specs, two compiled files or two compiled folders (OUT or one job folder).

    None is a side absent at a git revision (a spec added or removed since): everything
    on the other side is new or removed.  The names are what the user wrote (REV:PATH).
    """
    import os

    from trainspec.compiler import UsageError

    a_name, b_name = a_name or a or "", b_name or b or ""
    if a is None and b is None:
        raise UsageError(f"neither {a_name} nor {b_name} exists")
    if a is None:
        return _one_sided(b or "", b_name, added=True)
    if b is None:
        return _one_sided(a, a_name, added=False)
    if os.path.isdir(a) != os.path.isdir(b):
        raise UsageError(f"compare a folder with a folder and a file with a file ({a_name}, {b_name})")
    if os.path.isdir(a):
        left, right = _folder_files(a), _folder_files(b)
        changes: list[Change] = []
        one_job = any(os.sep not in rel for rel in set(left) | set(right))  # a job folder, not OUT
        for rel in sorted(set(left) | set(right)):
            job = _job_of(rel, b_name, one_job)
            if rel not in left or rel not in right:
                changes.append(Change(job, rel, f"file {rel}", "new" if rel in right else "removed"))
                continue
            changes.extend(_safe_diff(_read(left[rel], a_name), _read(right[rel], b_name), job, rel))
        return changes
    if is_spec(a) and is_spec(b):
        left, right = spec_objects(a, a_name), spec_objects(b, b_name)
        if len(left) == 1 and len(right) == 1:  # one job each: compare them even when renamed
            (ja, ta), (jb, tb) = next(iter(left.items())), next(iter(right.items()))
            return diff_texts(ta, tb, jb if ja == jb else f"{ja} → {jb}", "k8s.yaml")
        changes = []
        for job in sorted(set(left) | set(right)):
            if job not in left or job not in right:
                changes.append(Change(job, "", f"job {job}", "new" if job in right else "removed"))
            else:
                changes.extend(diff_texts(left[job], right[job], job, "k8s.yaml"))
        return changes
    return _safe_diff(_read(a, a_name), _read(b, b_name), "", os.path.basename(b_name.rstrip("/")))


def _job_of(rel: str, folder_name: str, one_job: bool) -> str:
    """The job a file of a compared folder belongs to: OUT/<job>/..., or the job folder itself."""
    import os

    parts = rel.split(os.sep)
    if len(parts) > 1 and not one_job:
        return parts[0]
    _, colon, path = folder_name.partition(":")
    return os.path.basename(os.path.normpath(path if colon else folder_name))


def _one_sided(path: str, name: str, added: bool) -> list[Change]:
    """Everything in `path` as new (added) or removed: the other side did not exist."""
    import os

    change = "new" if added else "removed"
    if os.path.isdir(path):
        changes = []
        files = _folder_files(path)
        one_job = any(os.sep not in rel for rel in files)
        for rel in files:
            job = _job_of(rel, name, one_job)
            changes.append(Change(job, rel, f"file {rel}", change))
        return changes
    if is_spec(path):
        changes = []
        for job, text in spec_objects(path, name).items():
            changes.append(Change(job, "", f"job {job}", change))
            changes.extend(diff_texts("", text, job, "k8s.yaml") if added else diff_texts(text, "", job, "k8s.yaml"))
        return changes
    text, file = _read(path, name), os.path.basename(name.rstrip("/"))
    try:
        return diff_texts("", text, "", file) if added else diff_texts(text, "", "", file)
    except Exception:  # not YAML: the file as a whole
        return [Change("", file, f"file {file}", change)]


GIT_ABSENT = None  # git_revision_path's answer for a path the revision does not have


def git_revision_path(ref: str, scratch: str) -> str | None:
    """`REV:PATH` (as `git show` takes it) copied into scratch: a file, or a folder (PATH a tree);
    None when the revision exists but has no PATH (added since, or removed); a UsageError otherwise."""
    import os
    import shutil
    import subprocess

    from trainspec.compiler import UsageError
    from trainspec.compiler.limits import MAX_GIT_TREE_BYTES, MAX_OUTPUT_BYTES

    rev, sep, path = ref.partition(":")
    if not sep or not rev or not path or not shutil.which("git"):
        raise UsageError(f"{ref}: no such file or folder (a spec at a git revision is written REV:PATH)")
    # Only ever a revision and a path: never an option git would act on (`--output=FILE` writes a file).
    if rev.startswith("-") or path.startswith("-") or any(ord(c) < 32 for c in ref):
        raise UsageError(f"{ref!r}: a git revision and path may not start with '-' or hold control characters")

    def git(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], check=False, capture_output=True, timeout=60, input=stdin)

    found = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if found.returncode != 0:
        why = git("rev-parse", "--verify", f"{rev}^{{commit}}").stderr.decode(errors="replace").strip()
        raise UsageError(f"{ref}: {rev!r} is not a git revision here ({why or 'not a git repository'})")
    kind = git("cat-file", "-t", f"{rev}:{path}")
    if kind.returncode != 0:
        # git reads REV:PATH from the repository's top; typed in a subfolder, PATH usually means the
        # file here. Taking it for a spec added since would say "everything is new": say so instead.
        prefix = git("rev-parse", "--show-prefix").stdout.decode(errors="replace").strip()
        if prefix and not path.startswith(("./", "../")) \
                and git("cat-file", "-t", f"{rev}:{prefix}{path}").returncode == 0:
            raise UsageError(f"{ref}: git reads the path after '{rev}:' from the repository's top, which has no "
                             f"{path}; hint: for the one in this folder write {rev}:./{path} "
                             f"(or {rev}:{prefix}{path})")
        return GIT_ABSENT
    copy = os.path.join(scratch, str(len(os.listdir(scratch))))
    if kind.stdout.strip() == b"blob":
        os.makedirs(copy)
        copy = os.path.join(copy, os.path.basename(path.rstrip("/")))
        with open(copy, "wb") as handle:
            handle.write(bounded_git(["cat-file", "blob", f"{rev}:{path}"], MAX_OUTPUT_BYTES, ref, "the file"))
        return copy
    # A revision is someone else's: a tree of trees that share subtrees (a git bomb) lists billions of
    # entries from a few kilobytes. The listing, each file and their sum are read as bounded streams.
    listing = bounded_git(["ls-tree", "-r", "-z", "-l", f"{rev}:{path}"], MAX_GIT_TREE_BYTES, ref,
                          "the folder's listing (`git ls-tree -r`)")
    os.makedirs(copy)
    entries = [entry.split(b"\t", 1) for entry in listing.split(b"\0") if entry]
    blobs = [(meta.split(), name.decode(errors="replace")) for meta, name in entries if meta.split()[1] == b"blob"]
    wanted = [(fields[2].decode(), name, int(fields[3]) if fields[3].isdigit() else 0) for fields, name in blobs]
    total = sum(size for _, _, size in wanted)
    if len(wanted) > MAX_GIT_FILES or total > MAX_GIT_TREE_BYTES:
        raise UsageError(f"{ref}: the folder holds {len(wanted)} files of {total} bytes at {rev}; `diff` reads "
                         f"at most {MAX_GIT_FILES} files and {MAX_GIT_TREE_BYTES} bytes from a revision",
                         hint="compare a smaller folder, or one spec file")
    for sha, name, _size in wanted:
        target = os.path.normpath(os.path.join(copy, name))
        if not target.startswith(copy + os.sep):
            continue  # git never stores such a name; never write outside scratch anyway
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(bounded_git(["cat-file", "blob", sha], MAX_OUTPUT_BYTES, f"{rev}:{path}/{name}", "the file"))
    return copy


MAX_GIT_FILES = 10_000  # files `diff` copies from one revision's folder


def bounded_git(args: list[str], limit: int, ref: str, what: str) -> bytes:
    """git's standard output, read as a stream of at most `limit` bytes: past it git is killed and the
    answer is a UsageError (never a buffer of whatever git would print)."""
    import subprocess

    from trainspec.compiler import UsageError

    child = subprocess.Popen(["git", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    try:
        data = child.stdout.read(limit + 1)
        if len(data) > limit:
            raise UsageError(f"{ref}: {what} at this revision is over {limit} bytes; `diff` reads at most that "
                             "much from git", hint="compare a smaller folder, or one spec file")
        error = child.stderr.read(64 * 1024)
        if child.wait(timeout=60) != 0:
            raise UsageError(f"{ref}: {error.decode(errors='replace').strip() or 'git failed'}")
        return data
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()
        child.stderr.close()


def _read(path: str, name: str | None = None) -> str:
    from trainspec.compiler import UsageError

    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"{name or path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{name or path}: cannot read: not UTF-8 text") from None


def _safe_diff(old: str, new: str, job: str, file: str) -> list[Change]:
    from trainspec.compiler.pyyaml import yaml

    try:
        return diff_texts(old, new, job, file)
    except yaml.YAMLError:
        return [] if old == new else [Change(job, file, f"file {file} (not YAML)", "changed")]


def render_text(changes: list[Change]) -> list[str]:
    lines: list[str] = []
    current = None
    for change in changes:
        heading = " ".join(x for x in (change.job, change.file and f"({change.file})") if x)
        if heading != current:
            current = heading
            if heading:
                lines.append(f"{heading}:\n")
        lines.append(f"  {change.text()}\n")
    return lines


def check_summary(root: str, file_changes) -> list[str]:
    """The semantic part of `build --check`: per job, from its k8s.yaml (or its first changed file)."""
    import os

    from trainspec.output import LINK, FileChange

    chosen: dict[str, FileChange] = {}
    for fc in file_changes:
        job, _, inner = fc.rel.partition(os.sep)
        if not inner or not inner.endswith(".yaml") or os.sep in inner:
            continue
        if not isinstance(fc.old, str) or fc.new is None or fc.old is LINK:
            continue
        if job not in chosen or inner == "k8s.yaml":
            chosen[job] = fc
    from trainspec.compiler.pyyaml import yaml

    lines: list[str] = []
    for job, fc in sorted(chosen.items()):
        try:
            changes = diff_texts(str(fc.old), fc.new or "", job, os.path.basename(fc.rel))
        except yaml.YAMLError:  # a hand-edited file that is not YAML: the unified diff below still shows it
            continue
        lines.extend(render_text(changes))
    return lines
