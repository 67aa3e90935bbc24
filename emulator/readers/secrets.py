"""Secrets and ConfigMaps a run needs but its files do not carry: --secret/--configmap values
(kept off the command line), and the MPI ssh key made fresh for each run (only in memory and
in the run's containers)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...compiler.errors import SpecError, SpecErrors, UsageError
from ..model.errors import FieldError


def parse_key_options(options: Iterable[str], flag: str) -> dict[str, dict[str, bytes]]:
    """--secret/--configmap values, in forms that keep secrets off the command line:

    NAME=PATH or NAME=@PATH   a directory of key files, or a KEY=VALUE env file
    NAME:KEY=@FILE            the key's value is the file's bytes
    NAME:KEY=@env:VAR         the key's value is the environment variable VAR
    NAME:KEY=VALUE            inline (visible in the process list until the run hides it);
                              a value that starts with @ is written @@...
    """
    out: dict[str, dict[str, bytes]] = {}
    for opt in options:
        colon, eq = opt.find(":"), opt.find("=")
        # A mistyped --secret may be a secret value: errors name the secret, never echo the option.
        name_part = opt.split(":", 1)[0].split("=", 1)[0]
        shown = repr(opt) if flag != "--secret" else f"{name_part} (value not shown)" if name_part != opt \
            else "(option not shown)"
        if eq <= 0:
            raise UsageError("has no '='", where=f"{flag} {shown}",
                             expected="NAME=PATH, NAME:KEY=@FILE, NAME:KEY=@env:VAR or NAME:KEY=VALUE")
        if 0 < colon < eq:
            name, rest = opt[:colon], opt[colon + 1:]
            key, value = rest.split("=", 1)
            out.setdefault(name, {})[key] = _indirect_value(value, f"{flag} {name}:{key}")
            continue
        name, raw = opt[:eq], opt[eq + 1:]
        path = Path(raw.removeprefix("@"))
        data = out.setdefault(name, {})
        try:
            if path.is_dir():
                for f in sorted(path.iterdir()):
                    if f.is_file():
                        data[f.name] = f.read_bytes()
            elif path.is_file():
                data.update(_env_file(path, f"{flag} {name}"))
            else:
                where = "the path given" if flag == "--secret" else str(path)
                raise UsageError(f"{where} is neither a file nor a directory", where=f"{flag} {name}",
                                 expected="NAME=PATH or NAME:KEY=VALUE")
        except OSError as exc:
            raise UsageError(f"cannot read {exc.filename}: {exc.strerror}", where=f"{flag} {name}") from None
    return out


def _env_file(path: Path, option: str) -> dict[str, bytes]:
    """A KEY=VALUE file's keys; a bad line is an error at its line, never shown (it may hold a secret)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SpecErrors([SpecError(str(path), 1, 1, "", "is not UTF-8 text (not shown)", "a KEY=VALUE file",
                                    f"{option} takes a directory of key files for binary values")]) from None
    data: dict[str, bytes] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise SpecErrors([SpecError(str(path), n, 1, "", "a line without '=' (not shown)", "KEY=VALUE",
                                        f"{option} reads a directory of key files or a KEY=VALUE env file")])
        k, v = line.split("=", 1)
        data[k.strip()] = v.strip().encode()
    return data


def _indirect_value(value: str, where: str) -> bytes:
    if value.startswith("@@"):
        return value[1:].encode()
    if value.startswith("@env:"):
        var = value[len("@env:"):]
        if var not in os.environ:
            raise UsageError(f"environment variable {var} is not set", where=where)
        return os.environ[var].encode()
    if value.startswith("@"):
        try:
            return Path(value[1:]).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {value[1:]}: {exc.strerror}", where=where) from None
    return value.encode()


def referenced_secrets(obj: Any, out: set[str]) -> None:
    """Add to `out` every Secret name `obj` (manifests, any depth) refers to."""
    if isinstance(obj, dict):
        for key in ("secretName",):
            if isinstance(obj.get(key), str):
                out.add(obj[key])
        for key in ("secretKeyRef", "secretRef"):
            ref = obj.get(key)
            if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                out.add(ref["name"])
        for v in obj.values():
            referenced_secrets(v, out)
    elif isinstance(obj, list):
        for v in obj:
            referenced_secrets(v, out)


def add_ssh_secrets(objects: list[dict], secrets: dict[str, dict[str, bytes]]) -> None:
    """Make `<job>-ssh` for MPI jobs that reference it without shipping it, and `<tj>-mpi-ssh-auth`, which
    Trainer's MPI plugin creates for a TrainJob (compiler/runtimes.py: a runtime's expansion mounts it)."""
    present = {(o.get("metadata") or {}).get("name") for o in objects if o.get("kind") == "Secret"}
    referenced: set[str] = set()
    referenced_secrets(objects, referenced)
    for name in sorted(referenced):
        if name.endswith(("-ssh", "-mpi-ssh-auth")) and name not in present and name not in secrets:
            secrets[name] = ssh_keypair()


def ssh_keypair() -> dict[str, bytes]:
    """A fresh ed25519 key for one run (the `cryptography` package)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return {"ssh-privatekey": private, "ssh-publickey": public + b" trainspec-emulator\n"}


def env_text(value: bytes, name: str, where: str, kind: str, node: Any = None, field: tuple = ()) -> str:
    """A ConfigMap or Secret value that becomes an environment variable: it must be UTF-8 text (the
    Docker API carries the environment as JSON strings, so binary bytes would arrive changed).
    Refused naming the variable, never showing the value; `node`/`field`: where the reference was
    written, for the error's position."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise FieldError(f"env {name!r} from a {kind} is not UTF-8 text (value not shown); the emulator cannot pass "
                         "binary bytes through a container's environment", where=where, node=node, field=field,
                         hint="mount the key as a file instead") from None
