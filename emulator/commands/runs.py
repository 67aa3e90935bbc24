"""Finding runs: the state folder, the runs recorded in it and the ones live on each engine, by id or job name."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ...compiler.errors import UsageError
from ...termsafe import neutralise


def state_folder(args) -> Path:
    from ..host.state import state_dir

    return state_dir(getattr(args, "state_dir", None))


def resolve_runs(state: Path, name: str, docker_runs: dict | None = None, anywhere: bool = True) -> list[str]:
    """Run ids for a run id or a job name (newest first).

    A job name means this state folder's runs; when it has none and `anywhere` (reading:
    `logs`, `ps RUN`), the job's live runs in any folder (found by their labels) — if those
    are in one folder only, so the name is not ambiguous.  `down` stops nothing of another
    folder's by a job name alone: it names them and the option instead."""
    from ..host.ownfs import Untrusted

    recorded, refused = recorded_runs(state)
    if name in refused:
        raise Untrusted(f"run {name}: {refused[name]}",
                        hint=f"remove {state / 'runs' / name} if you did not make it; trainspec acts only on the "
                             "runs it recorded")
    ids = [s["run_id"] for s in recorded if s.get("run_id") == name]
    if ids or name in (docker_runs or {}):
        return ids or [name]
    ids = [s["run_id"] for s in recorded if s.get("job") == name]
    for rid, info in (docker_runs or {}).items():
        if info.get("job") == name and info.get("state_dir") == str(state) and rid not in ids:
            ids.append(rid)
    if ids:
        return ids
    elsewhere = {rid: info.get("state_dir") or "?" for rid, info in (docker_runs or {}).items()
                 if info.get("job") == name}
    folders = sorted(set(elsewhere.values()))
    if folders and not anywhere:
        listed = ", ".join(f"{rid} ({folder})" for rid, folder in sorted(elsewhere.items()))
        raise UsageError(f"no run of job {name!r} was started from this folder ({state}); it runs from other "
                         f"folders: {listed}; `trainspec down {name} --all` stops those, or name a run id")
    if len(folders) == 1:
        return sorted(elsewhere)
    if folders:
        listed = ", ".join(f"{rid} ({folder})" for rid, folder in sorted(elsewhere.items()))
        raise UsageError(f"job {name!r} has runs in {len(folders)} folders: {listed}; name a run id, or run "
                         "from its folder (or pass --state-dir)")
    raise UsageError(f"no run or job named {name!r} here ({state}) nor running anywhere on this Docker engine "
                     "(see `trainspec ps -a`)")


WARNED_FOLDERS: set[str] = set()  # folders already warned about, once a process (down and gc share it)


def recorded_runs(state: Path) -> tuple[list[dict], dict[str, str]]:
    """This folder's run records trainspec made (newest first), and the others (folder -> why), each
    said once on stderr. A state folder (or its `runs`) that is a link is refused outright."""
    from ..host.ownfs import FOLDER, Untrusted
    from ..host.state import find_runs

    refused: dict[str, str] = {}
    runs = find_runs(state, refused)
    if FOLDER in refused:
        raise Untrusted(refused[FOLDER].split("; hint: ")[0],
                        hint="remove it (trainspec makes it again), or pass --state-dir with another folder")
    for name, why in sorted(refused.items()):
        if name not in WARNED_FOLDERS:
            WARNED_FOLDERS.add(name)
            print(neutralise(f"trainspec: ignoring {state / 'runs' / name}: {why}", False), file=sys.stderr)
    return runs, refused


def engines_for(args, state: Path) -> list:
    """Clients of the engine chosen for this command and, unless --engine/$TRAINSPEC_ENGINE named one,
    of the engines this folder's runs were recorded on (a Podman run is found on Podman even where
    Docker is the default). The chosen engine's error when none answers."""
    from ..adapters.choice import choose, recorded
    from ..adapters.engines import connect

    first = choose(getattr(args, "engine", None))
    wanted = [first]
    if not first.explicit:
        for st in recorded_runs(state)[0]:
            ch = recorded(st.get("engine"), st.get("engine_url"))
            if ch is not None and all(ch.url != w.url for w in wanted):
                wanted.append(ch)
    clients, error = [], None
    for ch in wanted:
        try:
            clients.append(connect(choice=ch))
        except UsageError as exc:
            if ch is first:
                error = exc
    if error is not None:
        if not clients:
            raise error
        print(f"trainspec: {error}; listing the runs of {', '.join(c.title for c in clients)} only",
              file=sys.stderr)
    return clients


def runs_on_engines(clients: list) -> dict:
    """run id -> its containers, networks and volumes (ContainerEngine.list_runs) on each engine, and
    `client`: the engine it is on."""
    live: dict = {}
    for client in clients:
        for rid, info in client.list_runs().items():
            live.setdefault(rid, {**info, "client": client})
    return live


def live_runs(args, state: Path) -> dict:
    """Runs on the engines by their labels; {} when no engine answers (saved logs still show)."""
    try:
        return runs_on_engines(engines_for(args, state))
    except UsageError:
        return {}


def run_folder(state: Path, rid: str, live: dict) -> Path:
    from ..host.state import run_dir

    folder = (live.get(rid) or {}).get("state_dir")
    return run_dir(Path(folder) if folder else state, rid)


def same_folder(folder: str | None, state: Path) -> bool:
    """Whether a run's recorded state folder is this one (a run without one counts as here)."""
    return not folder or os.path.realpath(folder) == os.path.realpath(state)


def client_of(clients: list, state: Path, rid: str, live: dict):
    """The engine a run is on: where its containers are, else the one its record names, else the chosen one."""
    from ..host.state import read_state, run_dir

    if rid in live:
        return live[rid]["client"]
    st = read_state(run_dir(state, rid)) or {}
    return next((c for c in clients if c.name == st.get("engine") and c.url == st.get("engine_url")), clients[0])
