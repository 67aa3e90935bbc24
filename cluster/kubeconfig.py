"""kubectl's kubeconfig merge (client-go clientcmd.ClientConfigLoadingRules): pure, no `kubernetes` import.

The python client merges a KUBECONFIG list differently from kubectl: its last file's
current-context wins and an empty file is an error. kubectl's rules, kept here: files in order,
missing and empty files skipped; the first file to set current-context wins; a cluster, context or
user name defined in two files keeps the first definition; relative file references resolve
against the file that holds them.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import yaml

from .errors import ClusterError

# File references kubectl resolves relative to their kubeconfig (clientcmd.ResolvePaths).
_CLUSTER_FILES = ("certificate-authority",)
_USER_FILES = ("client-certificate", "client-key", "tokenFile")


class Merged(NamedTuple):
    config: dict | None  # None: no file with content
    files: tuple[str, ...]  # the files read, in order


def candidate_files(kubeconfig: str | None, env: str | None, home: str) -> tuple[list[str], bool]:
    """The files to read, and whether they were named explicitly (--kubeconfig: it must exist)."""
    if kubeconfig:
        return [os.path.expanduser(kubeconfig)], True
    if env:
        return [os.path.expanduser(f) for f in env.split(os.pathsep) if f], False
    return [os.path.join(home, ".kube", "config")], False


def _resolved(entry: Any, keys: tuple[str, ...], folder: str) -> Any:
    if not isinstance(entry, dict):
        return entry
    out = dict(entry)
    for k in keys:
        value = out.get(k)
        if isinstance(value, str) and value and not os.path.isabs(value):
            out[k] = os.path.normpath(os.path.join(folder, value))
    return out


def _resolve_user(user: Any, folder: str) -> Any:
    user = _resolved(user, _USER_FILES, folder)
    if isinstance(user, dict) and isinstance(user.get("exec"), dict):
        command = user["exec"].get("command")
        # kubectl resolves an exec command only when it is a relative path, not a name looked up on PATH
        if isinstance(command, str) and os.sep in command and not os.path.isabs(command):
            user = {**user, "exec": {**user["exec"], "command": os.path.normpath(os.path.join(folder, command))}}
    return user


def merge(files: list[str], explicit: bool) -> Merged:
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "contexts": [], "users": []}
    seen: dict[str, set[str]] = {"clusters": set(), "contexts": set(), "users": set()}
    read: list[str] = []
    for path in files:
        if not os.path.exists(path):
            if explicit:
                raise ClusterError(f"no kubeconfig at {path}")
            continue
        try:
            with open(path, encoding="utf-8") as f:
                data = yaml.safe_load(f)
        except (OSError, UnicodeDecodeError) as exc:
            raise ClusterError(f"cannot read the kubeconfig {path}: {exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
            raise ClusterError(f"{path}{where}: the kubeconfig is not valid YAML") from None
        if data is None:
            continue  # kubectl skips an empty file
        if not isinstance(data, dict):
            raise ClusterError(f"{path}: a kubeconfig is a mapping (apiVersion, kind: Config, clusters, ...)")
        read.append(path)
        folder = os.path.dirname(os.path.abspath(path))
        if data.get("current-context") and not merged.get("current-context"):
            merged["current-context"] = data["current-context"]
        for section in ("clusters", "contexts", "users"):
            entries = data.get(section) or []
            if not isinstance(entries, list):
                raise ClusterError(f"{path}: {section} must be a list of {{name, {section[:-1]}}}")
            for entry in entries:
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise ClusterError(f"{path}: every entry of {section} needs a name")
                if entry["name"] in seen[section]:
                    continue  # the first file to define a name wins
                seen[section].add(entry["name"])
                field = section[:-1]
                body = entry.get(field) or {}
                body = _resolved(body, _CLUSTER_FILES, folder) if section == "clusters" else \
                    _resolve_user(body, folder) if section == "users" else body
                merged[section].append({"name": entry["name"], field: body})
    return Merged(merged if read else None, tuple(read))


def context_names(config: dict) -> list[str]:
    return sorted(str(c.get("name")) for c in config.get("contexts") or ())


def chosen_context(config: dict, context: str | None, files: str) -> tuple[str, dict]:
    """The context to use (--context, else current-context) and its body; a clear error when there is none."""
    name = context or config.get("current-context") or ""
    if not name:
        raise ClusterError(f"the kubeconfig ({files}) sets no current-context: pass --context "
                           f"(contexts: {', '.join(context_names(config)) or 'none'})")
    found = next((c for c in config.get("contexts") or () if c.get("name") == name), None)
    if found is None:
        flag = "--context " if context else "current-context "
        raise ClusterError(f"{flag}{name}: no such context in {files} "
                           f"(contexts: {', '.join(context_names(config)) or 'none'})")
    return name, found.get("context") or {}
