"""From what the user names on the command line to a run model.

`trainspec run` takes a spec (compiled here to the `k8s` target's objects),
a compiled `k8s.yaml`, or a compiled `compose.yaml`. Secrets the manifests
reference but do not contain come from --secret; the MPI ssh Secret is made
fresh for each run when absent (the keys exist only in memory and in the
run's containers).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..compiler.errors import SpecErrors, UsageError
from .from_k8s import from_k8s
from .runmodel import JobModel

SPEC_API = "trainspec/v1"


def read_documents(path: str) -> list[Any]:
    """The file's YAML (or JSON) documents, read with the compiler's loader and its limits
    (file size, alias expansion, nesting depth): a compiled file is input like a spec."""
    from ..compiler.loader import load_file

    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    if p.is_dir():
        raise UsageError(f"{path} is a directory; name a spec, a compiled k8s.yaml or a compose.yaml")
    if p.suffix.lower() == ".jsonnet":
        raise UsageError(f"{path}: a .jsonnet file is a spec")  # never reached: load() compiles it
    try:
        return [d.data for d in load_file(path) if d.data is not None]
    except SpecErrors as exc:
        raise UsageError(str(exc)) from None


def is_spec(path: str, docs: list[Any] | None) -> bool:
    if path.endswith(".jsonnet"):
        return True
    return any(isinstance(d, dict) and (d.get("apiVersion") == SPEC_API or d.get("kind") == "TrainingJob")
               for d in docs or [])


def compile_spec(path: str, tla: dict[str, str], ext_vars: dict[str, str], jpath: list[str],
                 job: str | None) -> tuple[list[dict], str]:
    from ..targets import k8s
    from .overrides import load_plans  # the compiler's, with `--set` edits applied first (overrides.py)

    try:
        plans = load_plans(path, tla=tla, ext_vars=ext_vars, jpath=jpath)
    except SpecErrors as exc:
        raise UsageError(str(exc)) from None
    if job is not None:
        plans = [p for p in plans if p.name == job]
        if not plans:
            raise UsageError(f"{path}: no job named {job!r}")
    if len(plans) > 1:
        raise UsageError(f"{path} defines {len(plans)} jobs ({', '.join(p.name for p in plans)}); "
                         "choose one with --job NAME")
    return k8s.objects(plans[0]), plans[0].name


def load(path: str, *, tla: dict[str, str] | None = None, ext_vars: dict[str, str] | None = None,
         jpath: list[str] | None = None, job: str | None = None, secret_options: Iterable[str] = (),
         configmap_options: Iterable[str] = (), state_dir: str = ".trainspec", check_missing: bool = True) -> JobModel:
    secrets = parse_key_options(secret_options, "--secret")
    configmaps = parse_key_options(configmap_options, "--configmap")
    docs = None if path.endswith(".jsonnet") else read_documents(path)
    if is_spec(path, docs):
        objects, job = compile_spec(path, tla or {}, ext_vars or {}, jpath or [], job)
        source = f"{path} (compiled to k8s)"
    elif len(docs or []) == 1 and isinstance(docs[0], dict) and "services" in docs[0]:
        from .from_compose import from_compose

        return from_compose(docs[0], path, state_dir)
    else:
        objects, source = [d for d in docs or [] if isinstance(d, dict)], path
        if not objects:
            raise UsageError(f"{path}: empty; name a spec, a compiled k8s.yaml or a compose.yaml")
    add_ssh_secrets(objects, secrets)
    model = from_k8s(objects, source=source, state_dir=state_dir, job=job, secrets=secrets, configmaps=configmaps)
    if check_missing:  # `trainspec run` reports them in preflight, with missing images, all at once
        missing_objects_error(model)
    return model


def missing_objects_error(model: JobModel) -> None:
    """Secrets/ConfigMaps a cluster would have but the file does not: say how to give them."""
    for kind, missing, flag in (("Secret", model.secret_missing, "--secret"),
                                ("ConfigMap", model.configmap_missing, "--configmap")):
        if len(missing) == 1:
            name, where = next(iter(missing.items()))
            raise UsageError(
                f"{where}: {kind} {name!r} is not in {model.source}; supply it with {flag} {name}=PATH "
                f"(a directory of key files, or a KEY=VALUE env file) or {flag} {name}:KEY=VALUE")
        if missing:
            listed = "; ".join(f"{name!r} (used by {where})" for name, where in missing.items())
            raise UsageError(
                f"{kind}s not in {model.source}: {listed}; supply each with {flag} NAME=PATH "
                f"(a directory of key files, or a KEY=VALUE env file) or {flag} NAME:KEY=VALUE")

# -- secrets ------------------------------------------------------------------

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
            raise UsageError(f"{flag} {shown}: expected NAME=PATH, NAME:KEY=@FILE, NAME:KEY=@env:VAR or "
                             "NAME:KEY=VALUE")
        if 0 < colon < eq:
            name, rest = opt[:colon], opt[colon + 1:]
            key, value = rest.split("=", 1)
            out.setdefault(name, {})[key] = _indirect_value(value, f"{flag} {name}:{key}")
            continue
        name, raw = opt[:eq], opt[eq + 1:]
        path = Path(raw.removeprefix("@"))
        data = out.setdefault(name, {})
        if path.is_dir():
            for f in sorted(path.iterdir()):
                if f.is_file():
                    data[f.name] = f.read_bytes()
        elif path.is_file():
            for n, line in enumerate(path.read_text().splitlines(), 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if "=" not in line:
                    raise UsageError(f"{flag} {name}: {path}:{n}: expected KEY=VALUE")
                k, v = line.split("=", 1)
                data[k.strip()] = v.strip().encode()
        else:
            where = "the path given" if flag == "--secret" else str(path)
            raise UsageError(f"{flag} {name}: {where} is neither a file nor a directory "
                             f"(expected NAME=PATH or NAME:KEY=VALUE)")
    return out


def _indirect_value(value: str, where: str) -> bytes:
    if value.startswith("@@"):
        return value[1:].encode()
    if value.startswith("@env:"):
        var = value[len("@env:"):]
        if var not in os.environ:
            raise UsageError(f"{where}: environment variable {var} is not set")
        return os.environ[var].encode()
    if value.startswith("@"):
        try:
            return Path(value[1:]).read_bytes()
        except OSError as exc:
            raise UsageError(f"{where}: cannot read {value[1:]}: {exc.strerror}") from None
    return value.encode()


def _referenced_secrets(obj: Any, out: set[str]) -> None:
    if isinstance(obj, dict):
        for key in ("secretName",):
            if isinstance(obj.get(key), str):
                out.add(obj[key])
        for key in ("secretKeyRef", "secretRef"):
            ref = obj.get(key)
            if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                out.add(ref["name"])
        for v in obj.values():
            _referenced_secrets(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _referenced_secrets(v, out)


def add_ssh_secrets(objects: list[dict], secrets: dict[str, dict[str, bytes]]) -> None:
    """Make `<job>-ssh` for MPI jobs that reference it without shipping it."""
    present = {(o.get("metadata") or {}).get("name") for o in objects if o.get("kind") == "Secret"}
    referenced: set[str] = set()
    _referenced_secrets(objects, referenced)
    for name in sorted(referenced):
        if name.endswith("-ssh") and name not in present and name not in secrets:
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
