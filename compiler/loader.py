"""Read spec files (YAML, JSON, Jsonnet) into plain data plus source positions.

YAML goes through PyYAML's C composer: we build the Python values from the node
graph ourselves, which gives a line and column for every key and value, makes a
duplicate key an error and bounds how far aliases may expand.
"""

import json
import os
from typing import NamedTuple

from .errors import SpecError, SpecErrors
from .limits import MAX_DEPTH, MAX_EXPANDED_BYTES, MAX_FILE_BYTES, MAX_NODES

__all__ = ["MAX_DEPTH", "MAX_EXPANDED_BYTES", "MAX_FILE_BYTES", "MAX_NODES", "Document", "load_file",
           "from_yaml_text", "read_text", "find_spec_files"]

SPEC_SUFFIXES = (".yaml", ".yml", ".json", ".jsonnet")


class Document:
    """One job document: its data and where each of its paths was written."""

    __slots__ = ("data", "file", "key_positions", "positions")  # a plain class: `dataclasses` costs start-up

    def __init__(self, file: str, data: object, positions: dict[tuple, tuple[int, int]] | None = None,
                 key_positions: dict[tuple, tuple[int, int]] | None = None):
        self.file = file
        self.data = data
        self.positions = {} if positions is None else positions
        self.key_positions = {} if key_positions is None else key_positions

    def __repr__(self) -> str:
        return f"Document({self.file!r}, {self.data!r})"


class JsonnetOptions(NamedTuple):  # a NamedTuple: cheaper to define than a frozen dataclass (start-up)
    tla: tuple[tuple[str, str], ...] = ()
    ext_vars: tuple[tuple[str, str], ...] = ()
    jpath: tuple[str, ...] = ()


NO_JSONNET_OPTIONS = JsonnetOptions()


def load_file(path: str, jsonnet: JsonnetOptions = NO_JSONNET_OPTIONS) -> list[Document]:
    suffix = os.path.splitext(path)[1].lower()  # not pathlib: its import is a tenth of compile's start-up
    if suffix == ".jsonnet":
        from .jsonnet_loader import evaluate

        return _from_json_text(path, evaluate(path, jsonnet), positions=False)
    text = read_text(path)
    if suffix == ".json":
        return _from_json_text(path, text, positions=True)
    return from_yaml_text(path, text)


def from_text(name: str, text: str) -> list[Document]:
    """Documents of a spec's text with no file name to go by (standard input, the Python API): JSON
    when it parses as JSON (JSON's escapes, such as a surrogate pair, are not all YAML's), else YAML."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            json.loads(text)
        except ValueError:
            pass  # a YAML flow mapping, or broken JSON: YAML's error then
        else:
            return _from_json_text(name, text, positions=True)
    return from_yaml_text(name, text)


def from_data(name: str, data: object) -> list[Document]:
    """Documents of data already in memory (a mapping, or a list of them: one job each), for the Python
    API: no file, no text, so no positions (errors point at 1:1, as for Jsonnet output)."""
    items = data if isinstance(data, list) else [data]
    return [Document(name, item) for item in items if item is not None]


def _fail(file: str, line: int, column: int, message: str, expected: str = "", hint: str = ""):
    raise SpecErrors([SpecError(file, line, column, "", message, expected, hint)])


def read_text(path: str) -> str:
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            _fail(path, 1, 1, f"file is {size} bytes", f"at most {MAX_FILE_BYTES} bytes",
                  "a job spec is a few kilobytes; generate large jobs with replica counts, not copies")
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        _fail(path, 1, 1, "no such file", "", "check the path")
    except IsADirectoryError:
        _fail(path, 1, 1, "is a directory", "a spec file", "`trainspec build` takes folders")
    except PermissionError:
        _fail(path, 1, 1, "permission denied")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        _fail(path, line, column, f"byte 0x{raw[exc.start]:02x} is not UTF-8",
              "a UTF-8 text file", "re-save the file as UTF-8")
    raise AssertionError("unreachable")


# --- YAML ---------------------------------------------------------------------------

def _yaml_module():
    from .pyyaml import yaml

    return yaml


def from_yaml_text(path: str, text: str, max_bytes: int = MAX_FILE_BYTES) -> list[Document]:
    """`max_bytes`: the text's bound and its scalars' after aliases (a file's, MAX_FILE_BYTES and
    MAX_EXPANDED_BYTES; a compiled file `diff` compares may be as large as a target writes)."""
    if len(text) > max_bytes:  # text made in memory (a chart's rendering, stdin): a file's bound
        _fail(path, 1, 1, f"text is {len(text)} characters", f"at most {max_bytes} bytes",
              "a job spec or manifest is a few kilobytes")
    yaml = _yaml_module()
    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs: list[Document] = []
    try:
        for node in yaml.compose_all(text, Loader=loader_cls):
            if node is None:
                continue
            builder = _Builder(path, text, max(max_bytes, MAX_EXPANDED_BYTES))
            builder.refuse_bombs(node)
            data = builder.build(node, (), 0)
            if data is None:
                continue
            docs.append(Document(path, data, builder.positions, builder.key_positions))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        _fail(path, line, column, f"YAML syntax error: {problem}", "valid YAML",
              "check indentation and quoting near this position")
    except yaml.YAMLError as exc:
        _fail(path, 1, 1, f"YAML error: {exc}", "valid YAML")
    except RecursionError:
        _fail(path, 1, 1, "nesting too deep", f"at most {MAX_DEPTH} levels")
    return docs


def yaml_values(name: str, text: str, max_bytes: int = MAX_FILE_BYTES) -> list:
    """The values of every document of a YAML text (None documents left out), under the same bounds
    as a spec (size, aliases by values and bytes, depth, tags): for YAML trainspec did not write, where
    positions are not needed (a chart's rendered text, a compiled file `apply` or `diff` reads)."""
    return [doc.data for doc in from_yaml_text(name, text, max_bytes)]


class _Builder:
    """Turns a composed YAML node graph into Python data, recording positions."""

    def __init__(self, file: str, text: str = "", max_expanded: int = MAX_EXPANDED_BYTES):
        yaml = _yaml_module()
        self.file = file
        self.text = text
        self._lines: list[str] | None = None
        self._expression_starts: dict[int, list[tuple[int, int]]] = {}  # per node: aliases repeat one
        self.positions: dict[tuple, tuple[int, int]] = {}
        self.key_positions: dict[tuple, tuple[int, int]] = {}
        self.nodes = 0
        self.max_expanded = max_expanded
        self.constructor = yaml.constructor.SafeConstructor()
        self.yaml = yaml

    def _here(self, node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def refuse_bombs(self, root) -> None:
        """Refuse a document whose aliases expand past MAX_NODES values or MAX_EXPANDED_BYTES of scalar
        text, or that nests deeper than MAX_DEPTH, before building any of it.

        Aliases share their node, so the expanded size is counted once per distinct node: a
        billion-laughs document (or one long string aliased thousands of times) is refused in the
        time it took to parse, not after building it (the count in `build` stays as the backstop,
        for merge keys).  The walk is iterative: a 100,000-deep list is refused, not a RecursionError."""
        yaml = self.yaml
        mapping, sequence = yaml.MappingNode, yaml.SequenceNode
        sizes: dict[int, tuple[int, int]] = {}  # node id -> (values, bytes) once expanded
        stack: list[tuple] = [(root, 0, False)]
        while stack:
            node, depth, done = stack.pop()
            key = id(node)
            if key in sizes and not done:
                continue
            if isinstance(node, (mapping, sequence)):
                children = [v for _, v in node.value] if isinstance(node, mapping) else node.value
                if not done:
                    if depth > MAX_DEPTH:
                        line, column = self._here(node)
                        _fail(self.file, line, column, f"nesting deeper than {MAX_DEPTH} levels",
                              f"at most {MAX_DEPTH} levels")
                    sizes[key] = (0, 0)  # a placeholder: a cycle cannot be composed, but stay finite
                    stack.append((node, depth, True))
                    stack.extend((child, depth + 1, False) for child in children if id(child) not in sizes)
                    continue
                keys = sum(len(k.value) for k, _ in node.value if isinstance(k.value, str)) \
                    if isinstance(node, mapping) else 0
                count, size = 1, keys
                for child in children:
                    c, b = sizes[id(child)]
                    count, size = count + c, size + b
                sizes[key] = (count, size)
            else:
                value = node.value
                sizes[key] = (1, len(value) if isinstance(value, str) else 0)
        count, size = sizes[id(root)]
        if count <= MAX_NODES and size <= self.max_expanded:
            return
        over = (lambda n: sizes[id(n)][0] > MAX_NODES) if count > MAX_NODES else \
            (lambda n: sizes[id(n)][1] > self.max_expanded)
        node = root
        while True:  # down to the smallest value that is too big on its own: where the aliases multiply
            children = [v for _, v in node.value] if isinstance(node, mapping) else \
                node.value if isinstance(node, sequence) else []
            bigger = next((child for child in children if over(child)), None)
            if bigger is None:
                break
            node = bigger
        line, column = self._here(node)
        if count > MAX_NODES:
            _fail(self.file, line, column, f"document expands to more than {MAX_NODES} values",
                  "a spec of ordinary size", "aliases that refer to aliases multiply; write the values out")
        _fail(self.file, line, column,
              f"document expands to {size} bytes of text once its aliases are expanded",
              f"at most {self.max_expanded} bytes after expansion (as much as a file may hold)",
              "each alias repeats its anchor's whole text; write a long value once")

    def build(self, node, path: tuple, depth: int):
        self.nodes += 1
        if self.nodes > MAX_NODES:
            line, column = self._here(node)
            _fail(self.file, line, column, f"document expands to more than {MAX_NODES} values",
                  "a spec of ordinary size", "aliases that refer to aliases multiply; write the values out")
        if depth > MAX_DEPTH:
            line, column = self._here(node)
            _fail(self.file, line, column, f"nesting deeper than {MAX_DEPTH} levels", f"at most {MAX_DEPTH} levels")
        self.positions[path] = self._here(node)
        yaml = self.yaml
        if isinstance(node, yaml.MappingNode):
            if node.tag not in ("tag:yaml.org,2002:map",):
                self._bad_tag(node)
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != "tag:yaml.org,2002:seq":
                self._bad_tag(node)
            return [self.build(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
        value = self._scalar(node)
        if isinstance(value, str) and ("{{" in value or "{%" in value) and self.text:
            self._expressions(node, path, value)
        return value

    def _expressions(self, node, path: tuple, value: str) -> None:
        """Where each `{{ }}` of a templated string starts, so a template error points at its expression.

        Found in the scalar's own source text (quotes and escapes included); kept only when
        the source shows the same expressions as the value.
        """
        from .templating import EXPRESSION_KEY

        starts = self._expression_starts.get(id(node))
        if starts is None:
            starts = self._expression_starts[id(node)] = self._find_expressions(node, value)
        for i, start in enumerate(starts):
            self.positions[path + (EXPRESSION_KEY, i)] = start

    def _find_expressions(self, node, value: str) -> list[tuple[int, int]]:
        from .templating import EXPRESSION

        if self._lines is None:
            self._lines = self.text.split("\n")
        start, end = node.start_mark, node.end_mark
        lines = self._lines[start.line:end.line + 1]
        if not lines:
            return []
        first = start.column
        if len(lines) == 1:
            raw = lines[0][first:end.column]
        else:
            raw = "\n".join([lines[0][first:]] + lines[1:-1] + [lines[-1][:end.column]])
        spans = list(EXPRESSION.finditer(raw))
        if [m.group() for m in spans] != [m.group() for m in EXPRESSION.finditer(value)]:
            return []  # an escape inside an expression, a folded line: the expression's position is unclear
        out = []
        for match in spans:
            before = raw[:match.start()]
            line = start.line + before.count("\n")
            column = (first + len(before)) if line == start.line else len(before) - before.rfind("\n") - 1
            out.append((line + 1, column + 1))
        return out

    def _mapping(self, node, path: tuple, depth: int) -> dict:
        result: dict = {}
        merged: dict = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                sources = value_node.value if isinstance(value_node, self.yaml.SequenceNode) else [value_node]
                for source in sources:
                    value = self.build(source, path, depth + 1)
                    if not isinstance(value, dict):
                        line, column = self._here(source)
                        _fail(self.file, line, column, "a merge key (<<) must refer to a mapping")
                    for k, v in value.items():
                        merged.setdefault(k, v)
                continue
            key = self._scalar(key_node) if isinstance(key_node, self.yaml.ScalarNode) else None
            if not isinstance(key, (str, int, float, bool)) or key is None:
                line, column = self._here(key_node)
                _fail(self.file, line, column, "a mapping key must be a plain value",
                      "a string key", "quote the key")
            key = str(key) if not isinstance(key, str) else key
            if key in result:
                line, column = self._here(key_node)
                first = self.key_positions.get(path + (key,), (0, 0))
                _fail(self.file, line, column, f"duplicate key {key!r} (first at line {first[0]})",
                      "each key once per mapping", "remove one of them")
            self.key_positions[path + (key,)] = self._here(key_node)
            result[key] = self.build(value_node, path + (key,), depth + 1)
            if not isinstance(value_node, self.yaml.ScalarNode):
                # A block mapping or list starts on the next line; its key is where a reader looks.
                self.positions[path + (key,)] = self._here(key_node)
        for k, v in merged.items():
            result.setdefault(k, v)
        return result

    def _bad_tag(self, node):
        line, column = self._here(node)
        _fail(self.file, line, column, f"unsupported YAML tag {node.tag}",
              "plain strings, numbers, booleans, lists and maps", "remove the tag")

    def _scalar(self, node):
        tag = node.tag
        c = self.constructor
        if tag == "tag:yaml.org,2002:str":
            return node.value
        if tag == "tag:yaml.org,2002:int":
            return c.construct_yaml_int(node)
        if tag == "tag:yaml.org,2002:float":
            return c.construct_yaml_float(node)
        if tag == "tag:yaml.org,2002:bool":
            return c.construct_yaml_bool(node)
        if tag == "tag:yaml.org,2002:null":
            return None
        if tag == "tag:yaml.org,2002:timestamp":
            return node.value
        self._bad_tag(node)


# --- JSON ---------------------------------------------------------------------------

def _reject_duplicates(pairs):
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _from_json_text(path: str, text: str, positions: bool) -> list[Document]:
    try:
        data = json.loads(text, object_pairs_hook=_reject_duplicates)
    except json.JSONDecodeError as exc:
        _fail(path, exc.lineno, exc.colno, f"JSON syntax error: {exc.msg}", "valid JSON")
    except ValueError as exc:
        _fail(path, 1, 1, str(exc), "each key once per object", "remove one of them")
    except RecursionError:
        _fail(path, 1, 1, "nesting too deep", f"at most {MAX_DEPTH} levels")
    _refuse_deep(path, data)
    items = data if isinstance(data, list) else [data]
    docs: list[Document] = []
    position_docs: list[Document] = []
    if positions:
        try:
            position_docs = from_yaml_text(path, text)
        except SpecErrors:
            position_docs = []
    # A list of jobs: each job's positions are the list's under its index.
    where = _split_positions(position_docs[0], len(items)) if position_docs and isinstance(data, list) else None
    for i, item in enumerate(items):
        if item is None:
            continue
        doc = Document(path, item)
        if where is not None:
            doc.positions, doc.key_positions = where[i]
        elif position_docs and i == 0:
            doc.positions = position_docs[0].positions
            doc.key_positions = position_docs[0].key_positions
        docs.append(doc)
    return docs


def _refuse_deep(path: str, data) -> None:
    """JSON (and Jsonnet's output) nested deeper than MAX_DEPTH, as YAML is: every later walk of the
    data (validation, the emulator's copies of pod templates) may recurse. Iterative: any depth."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:  # as the YAML builder counts
            _fail(path, 1, 1, f"nesting deeper than {MAX_DEPTH} levels", f"at most {MAX_DEPTH} levels")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def _split_positions(doc: Document, count: int) -> list[tuple[dict, dict]]:
    out: list[tuple[dict, dict]] = [({}, {}) for _ in range(count)]
    for table, which in ((doc.positions, 0), (doc.key_positions, 1)):
        for key, place in table.items():
            if key and isinstance(key[0], int) and key[0] < count:
                out[key[0]][which][key[1:]] = place
    return out


def find_spec_files(root: str) -> list[str]:
    """Spec files in a folder, sorted, so builds are the same on every machine."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.lower().endswith(SPEC_SUFFIXES) and not name.startswith("."):
                found.append(os.path.join(dirpath, name))
    return found
