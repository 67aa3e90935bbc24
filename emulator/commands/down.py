"""`trainspec down | gc`: stop runs, and remove what crashed or killed runs left behind."""
from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from ...compiler.errors import UsageError
from ...termsafe import neutralise
from .runs import WARNED_FOLDERS, client_of, engines_for, resolve_runs, runs_on_engines, same_folder, state_folder


def cmd_down(args) -> int:
    from concurrent.futures import ThreadPoolExecutor

    state = state_folder(args)
    clients = engines_for(args, state)
    live = runs_on_engines(clients)
    ids = resolve_runs(state, args.job, live, anywhere=args.all)
    if args.job in ids:
        ids = [args.job]  # a run id: that run, wherever it was started
    elif args.all:  # a job name with --all: its live runs from every folder too
        ids += [rid for rid, info in live.items() if info.get("job") == args.job and rid not in ids]
    left = sorted(rid for rid, info in live.items()
                  if info.get("job") == args.job and rid not in ids and not same_folder(info.get("state_dir"), state))
    if args.grace is not None and args.grace < 0:
        raise UsageError("--grace must be 0 or more seconds")
    with ThreadPoolExecutor(max_workers=max(1, min(len(ids), 8))) as pool:
        results = list(pool.map(lambda rid: _down_one(client_of(clients, state, rid, live), state, rid,
                                                      live.get(rid), args.grace), ids))
    reported = 0
    for rid, (c, n, v) in zip(ids, results):
        if c or n or v or len(ids) == 1:
            print(f"{rid}: removed {c} container(s), {n} network(s), {v} volume(s)")
            reported += 1
    if not reported:
        print(f"nothing to remove for {args.job}")
    if left:
        print(f"trainspec: left {len(left)} run(s) of {args.job} started from other folders running: "
              f"{', '.join(left)} (`trainspec down {args.job} --all` stops them too)", file=sys.stderr)
    return 0


def _down_one(client, state: Path, rid: str, info: dict | None, grace: float | None) -> tuple[int, int, int]:
    """Stop one run: its supervisor (if alive) stops it as the run would (preStop hooks, grace
    periods, saved state); then everything left with the run's label is removed."""
    import signal
    from concurrent.futures import ThreadPoolExecutor

    from ..host.state import read_state, run_dir, supervisor_alive, supervisor_pid

    info = info or {"containers": [], "networks": 0, "volumes": 0}
    rdir = Path(info.get("state_dir") or state) / "runs" if info.get("state_dir") else None
    rdir = (rdir / rid) if rdir else run_dir(state, rid)
    sup = info.get("supervisor") or (read_state(rdir) or {}).get("supervisor", "")
    if sup and supervisor_alive(sup):
        if grace is not None:
            from ..host.ownfs import write_own_file

            with contextlib.suppress(OSError, UsageError):  # read by the supervisor's signal handler
                write_own_file(rdir.parent.parent, ("runs", rdir.name), "stop-grace", f"{grace:g}\n".encode())
        pid = supervisor_pid(sup)
        try:
            if pid:
                os.kill(pid, signal.SIGTERM)  # the supervisor cleans up itself, hooks and all
        except OSError:
            pass
        if grace == 0:
            # Nothing to wait for: force-remove (kill + remove, one call each, in parallel) while
            # the supervisor winds down; it finds them gone. What it might still create is
            # removed by label below, once it has exited.
            client.remove_containers(rid)
        # its containers' grace periods (at most the run's --grace, 10 s by default) plus removal
        deadline = time.monotonic() + (grace if grace is not None else 30) + 20
        while supervisor_alive(sup) and time.monotonic() < deadline:
            time.sleep(0.02)
    elif grace is not None and grace > 0:
        # No supervisor (killed, or --keep): stop with the grace period, then remove.
        cids = [c["id"] for c in info["containers"] if c["state"] == "running"]
        with ThreadPoolExecutor(max_workers=max(1, min(len(cids), 32))) as pool:
            list(pool.map(lambda cid: _quiet(client.stop, cid, int(grace)), cids))
    c, n, v = client.remove_run(rid)
    # The supervisor may have removed them itself: report what the run had.
    return max(c, len(info["containers"])), max(n, info["networks"]), max(v, info["volumes"])


def _quiet(fn, *a, **kw) -> None:
    with contextlib.suppress(Exception):  # gone already
        fn(*a, **kw)


def cmd_gc(args) -> int:
    from ..host.state import read_state, run_dir, supervisor_alive

    here = state_folder(args)
    runs = runs_on_engines(engines_for(args, here))
    removed = 0
    any_listed = False
    for rid, info in sorted(runs.items()):
        alive = supervisor_alive(info.get("supervisor", ""))
        st = read_state(run_dir(Path(info["state_dir"]), rid)) if info.get("state_dir") else None
        kept = bool(st and st.get("kept") and st.get("finished"))
        if not args.all_folders and info.get("state_dir") != str(here):
            continue  # another folder's runs are not this command's business (a test or a project there)
        if (alive or alive is None or kept) and not args.all:
            continue
        if args.dry_run:
            any_listed = True
            print(f"would remove {rid}: {len(info['containers'])} container(s), {info['networks']} network(s), "
                  f"{info['volumes']} volume(s)")
            continue
        c, n, v = info["client"].remove_run(rid)
        removed += 1
        print(f"{rid}: removed {c} container(s), {n} network(s), {v} volume(s)")
    removed += _sweep_files(here, runs, args)
    if not removed and not (args.dry_run and any_listed):
        print("nothing to remove")
    return 0


def _sweep_files(here: Path, runs: dict, args) -> int:
    """Secret/configMap folders on the tmpfs recorded by runs of this folder whose supervisor is
    gone (a CLI killed before or while creating containers): found from the run's record, not
    only through container labels."""
    from ..host.filesvol import sweep
    from ..host.state import read_state, run_dir, supervisor_alive

    def alive(rid: str, supervisor: str) -> bool:
        if args.all and not args.dry_run and rid in runs:
            return False  # removed above with its containers; the folder too
        st = read_state(run_dir(here, rid)) or {}
        if st.get("kept") and st.get("finished") and not args.all:
            return True  # --keep: the containers still use it, until `trainspec down` (or gc --all)
        for ident in {supervisor, str(st.get("supervisor") or ""), str(runs.get(rid, {}).get("supervisor", ""))}:
            if ident and supervisor_alive(ident) is not False:
                return not args.all
        return False

    refused: dict[str, str] = {}
    found = sweep(here, alive, dry_run=args.dry_run, refused=refused)
    for name, why in sorted(refused.items()):
        if name not in WARNED_FOLDERS:
            WARNED_FOLDERS.add(name)
            print(neutralise(f"trainspec: gc leaves alone what {here / 'runs' / name} names: {why}", False),
                  file=sys.stderr)
    for rid, path in found:
        print(f"{'would remove' if args.dry_run else 'removed'} {rid}'s secret files folder {path}")
    return 0 if args.dry_run else len(found)
