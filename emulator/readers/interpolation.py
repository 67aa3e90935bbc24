"""Compose interpolation, as the Compose specification defines it.

Every string value of the file (not keys) is interpolated before it is read:
`$$` is a literal `$`; `$VAR` and `${VAR}` the variable (empty when unset);
`${VAR:-default}` the default when VAR is unset or empty, `${VAR-default}` when
unset; `${VAR:?error}` fails when unset or empty, `${VAR?error}` when unset;
`${VAR:+replacement}` / `${VAR+replacement}` the replacement when set (and
non-empty). Defaults, errors and replacements are interpolated themselves
(`${A:-${B}}`). A `$` followed by anything else is an error, as in Compose: write `$$`.

Variables come only from what the user passed (a compose file is often someone else's,
and the containers it starts reach the network): the `.env` file beside the compose
file — read only when it is a regular file inside the project folder, never through a
symlink — or the `--env-file` files instead of it, then `-e NAME=VALUE` / `-e NAME` (that
one variable from the environment). Never the whole environment. Errors never print a
variable's value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...compiler.errors import UsageError, dotted
from ...compiler.limits import MAX_EXPANDED_BYTES, MAX_EXPANSION_BYTES

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPS = (":-", ":?", ":+", "-", "?", "+")


class InterpolationError(UsageError):
    """`field`: where in the compose file the string was (interpolate_tree sets it), for its position."""

    field: tuple = ()


class _Bounded(list):
    """An interpolation's pieces, refused past MAX_EXPANSION_BYTES before the text is joined."""

    def __init__(self, where: str):
        super().__init__()
        self.where, self.size = where, 0

    def append(self, piece: str) -> None:
        self.size += len(piece)
        if self.size > MAX_EXPANSION_BYTES:
            raise InterpolationError(f"interpolation makes over {MAX_EXPANSION_BYTES} characters of one value",
                                     where=self.where, expected=f"at most {MAX_EXPANSION_BYTES} characters "
                                     "(compiler/limits.py MAX_EXPANSION_BYTES)",
                                     hint="a variable repeated in a value repeats its whole text; put large "
                                     "data in a file")
        super().append(piece)


def interpolate(value: str, env: Mapping[str, str] | None = None, where: str = "") -> str:
    """`value` interpolated; at most MAX_EXPANSION_BYTES characters, checked as each piece is added
    (`$A$A$A...` with a long A would otherwise make gigabytes from a short line)."""
    env = {} if env is None else env  # never os.environ by default: only what the user passed
    if "$" not in value:
        return value
    out: list[str] = _Bounded(where)
    i, n = 0, len(value)
    while i < n:
        j = value.find("$", i)
        if j < 0:
            out.append(value[i:])
            break
        out.append(value[i:j])
        nxt = value[j + 1] if j + 1 < n else ""
        if nxt == "$":
            out.append("$")
            i = j + 2
        elif nxt == "{":
            end = _closing(value, j + 2, where)
            out.append(_braced(value[j + 2:end], env, where))
            i = end + 1
        else:
            m = _NAME.match(value, j + 1)
            if not m:
                raise InterpolationError(f"invalid interpolation format in {value!r}: a `$` must start "
                                         "$VAR, ${VAR...} or $$", where=where, hint="write $$ for a literal $")
            out.append(env.get(m.group(0), ""))
            i = m.end()
    return "".join(out)


def _closing(value: str, start: int, where: str) -> int:
    """Index of the `}` that closes the `${` before `start` (nested `${...}` allowed)."""
    depth, i = 1, start
    while i < len(value):
        if value.startswith("$$", i):
            i += 2
            continue
        if value.startswith("${", i):
            depth += 1
            i += 2
            continue
        if value[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise InterpolationError(f"invalid interpolation format in {value!r}: `${{` is never closed", where=where)


def _braced(body: str, env: Mapping[str, str], where: str) -> str:
    m = _NAME.match(body)
    if not m:
        raise InterpolationError(f"invalid interpolation format ${{{body}}}", where=where, expected="a variable name")
    name, rest = m.group(0), body[m.end():]
    if not rest:
        return env.get(name, "")
    op = next((o for o in _OPS if rest.startswith(o)), None)
    if op is None:
        raise InterpolationError(f"invalid interpolation format ${{{body}}}", where=where,
                                 expected="one of :- - :? ? :+ + after the name")
    word = rest[len(op):]
    val = env.get(name)
    missing = val is None or (op.startswith(":") and val == "")
    if op in (":-", "-"):
        return interpolate(word, env, where) if missing else str(val)
    if op in (":+", "+"):
        return "" if missing else interpolate(word, env, where)
    if missing:
        # The message as written (never interpolated: that would print another variable's value).
        message = word or f"{name} is not set"
        raise InterpolationError(f"required variable {name} is missing a value: {message}", where=where,
                                 hint=f"pass -e {name} (from your environment), -e {name}=VALUE or --env-file FILE")
    return str(val)


def interpolate_tree(doc: Any, env: Mapping[str, str], path: tuple = (), made: list[int] | None = None) -> Any:
    """Every string in a parsed compose file, interpolated (keys are left as written). All the
    strings interpolation changes, together, at most MAX_EXPANDED_BYTES (what a file may expand to):
    a value aliased thousands of times is interpolated once per alias."""
    made = [0] if made is None else made
    if isinstance(doc, str):
        where = dotted(path) or "<top>"
        try:
            text = interpolate(doc, env, where)
            if text is not doc:
                made[0] += len(text)
                if made[0] > MAX_EXPANDED_BYTES:
                    raise InterpolationError(
                        f"interpolation makes over {MAX_EXPANDED_BYTES} characters in the file's values together",
                        where=where, expected=f"at most {MAX_EXPANDED_BYTES} characters (as much as a file may "
                        "hold; compiler/limits.py MAX_EXPANDED_BYTES)",
                        hint="each alias of an interpolated value is interpolated again; write a long value once")
            return text
        except RecursionError:
            error = InterpolationError("interpolation nested too deeply", where=where)
        except InterpolationError as exc:
            error = exc
        error.field = path
        raise error from None
    if isinstance(doc, dict):
        return {k: interpolate_tree(v, env, path + (k,), made) for k, v in doc.items()}
    if isinstance(doc, list):
        return [interpolate_tree(v, env, path + (i,), made) for i, v in enumerate(doc)]
    return doc


def compose_env(compose_file: str, env_files: list[str] | None = None,
                env_options: list[str] | None = None) -> dict[str, str]:
    """The variables interpolation sees: `.env` beside the compose file (or the --env-file files
    instead), then the -e options. Never the process's environment as a whole."""
    out: dict[str, str] = {}
    if env_files:
        for f in env_files:
            try:
                text = Path(f).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise UsageError(f"--env-file {f}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
            out.update(_dotenv(text))
    else:
        dotenv = _project_dotenv(compose_file)
        if dotenv is not None:
            out.update(_dotenv(dotenv))
    for opt in env_options or []:
        name, sep, value = opt.partition("=")
        if not _NAME.fullmatch(name):
            raise UsageError(f"-e {name!r}: expected NAME=VALUE or NAME (a variable name: letters, digits, _)")
        if sep:
            out[name] = value
        elif name in os.environ:
            out[name] = os.environ[name]
    return out


def _project_dotenv(compose_file: str) -> str | None:
    """`.env` in the project folder: only a regular file there (a symlink could lead to
    ~/.aws/credentials), read without following a link; None when there is none."""
    folder = Path(compose_file).absolute().parent
    dotenv = folder / ".env"
    try:
        st = os.lstat(dotenv)
    except OSError:
        return None
    import stat

    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{dotenv} is not a regular file (a symlink, or something else); the emulator reads .env "
                         "only as a regular file inside the project folder; pass --env-file FILE to name one")
    try:
        fd = os.open(dotenv, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            data = f.read(1 << 20)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{dotenv}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None


def _dotenv(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key, value = key.strip(), value.strip()
        if key.startswith("export "):
            key = key[len("export "):].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key] = value
    return out
