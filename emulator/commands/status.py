"""`trainspec ps | logs`: the runs and their replicas, and what they printed."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path

from ...compiler.errors import UsageError
from ...termsafe import neutralise
from .runs import (
    engines_for,
    live_runs,
    recorded_runs,
    resolve_runs,
    run_folder,
    runs_on_engines,
    same_folder,
    state_folder,
)


def cmd_ps(args) -> int:
    from ..console.table import age_text
    from ..host.state import read_state, run_dir, supervisor_alive
    from ..model.status import Row

    state = state_folder(args)
    live = runs_on_engines(engines_for(args, state))
    if args.run:
        rid = resolve_runs(state, args.run, live)[0]
        st = read_state(run_folder(state, rid, live)) or {}
        if args.format == "json":
            print(json.dumps({"run_id": rid, "job": st.get("job", live.get(rid, {}).get("job")),
                              "status": st.get("status"), "reason": st.get("reason", ""),
                              "replicas": st.get("replicas", []),
                              "containers": live.get(rid, {}).get("containers", [])}, indent=2, sort_keys=True))
            return 0
        print(neutralise(f"run {rid}  job {st.get('job', live.get(rid, {}).get('job', '?'))}  "
                         f"status {st.get('status', '?')}" + (f"  ({st['reason']})" if st.get("reason") else ""),
                         False))
        from ..console.table import Console

        rows = [Row(r["display"], r["phase"], r.get("ready", False), r.get("restarts", 0), r.get("exit_code"),
                    r.get("reason", ""), st.get("started", time.time())) for r in st.get("replicas", [])]
        if rows:
            print(Console([r.name for r in rows], stream=sys.stdout, colour="never").table(rows, age=False))
        for c in live.get(rid, {}).get("containers", []):
            print(neutralise(f"  container {c['name']}: {c['status']}", False))
        return 0
    recorded = {s["run_id"]: s for s in recorded_runs(state)[0]}
    # Runs started from other folders are another project's: listed with --all only, but counted.
    here = [rid for rid, info in live.items() if same_folder(info.get("state_dir"), state)]
    others = [rid for rid in live if rid not in here]
    ids = list(live) if args.all else here
    if args.all:
        ids += [r for r in recorded if r not in live]
    table = []
    for rid in ids:
        info = live.get(rid, {"containers": [], "supervisor": "", "job": "?"})
        st = recorded.get(rid) or read_state(run_dir(Path(info.get("state_dir") or state), rid)) or {}
        running = sum(1 for c in info["containers"] if c["state"] == "running")
        total = len(st.get("replicas", [])) or len({c["replica"] for c in info["containers"]})
        alive = supervisor_alive(info.get("supervisor") or st.get("supervisor", ""))
        status = st.get("status", "?")
        if status == "Running" and alive is False:
            status = "orphaned"
        sup = "alive" if alive else ("-" if st.get("finished") else "gone" if alive is False else "elsewhere")
        table.append({"run_id": rid, "job": st.get("job", info.get("job", "?")), "status": status,
                      "running": running, "replicas": total, "started": st.get("started"),
                      "finished": st.get("finished"), "supervisor": sup, "reason": st.get("reason", ""),
                      "state_dir": info.get("state_dir") or str(state)})
    if args.format == "json":
        print(json.dumps(table, indent=2, sort_keys=True))
        return 0
    elsewhere = any(not same_folder(row["state_dir"], state) for row in table)
    print((f"{'RUN ID':<28} {'JOB':<20} {'STATUS':<12} {'REPLICAS':<10} {'AGE':<8} {'SUPERVISOR':<10}"
           + (" FOLDER" if elsewhere else "")).rstrip())
    for row in table:
        age = age_text(time.time() - row["started"]) if row["started"] else "-"
        folder = "" if same_folder(row["state_dir"], state) else os.path.dirname(row["state_dir"])
        line = (f"{row['run_id']:<28} {row['job']:<20} {row['status']:<12} "
                f"{str(row['running']) + '/' + str(row['replicas']):<10} {age:<8} {row['supervisor']:<10}"
                + (f" {folder or '.'}" if elsewhere else ""))
        print(neutralise(line.rstrip(), False))
    if others and not args.all:
        print(f"trainspec: {len(others)} live run(s) started from other folders not listed "
              "(`trainspec ps --all` lists them)", file=sys.stderr)
    return 0


def cmd_logs(args) -> int:
    from ..console.logview import parse_since, select, stamp_text
    from ..console.table import Console
    from ..host.savedlogs import LogReader
    from ..host.state import read_state

    state = state_folder(args)
    if args.tail is not None and args.tail < 0:
        raise UsageError("--tail must be 0 or more lines")
    since = parse_since(args.since)
    try:  # this folder's saved runs first: no daemon needed
        live: dict = {}
        rid = resolve_runs(state, args.job)[0]
    except UsageError:
        live = live_runs(args, state)  # a run of this job started from another folder
        rid = resolve_runs(state, args.job, live)[0]
    d = run_folder(state, rid, live)
    files = sorted(p for p in d.glob("*.log") if p.name != "supervisor.log")
    if args.replica:
        files = [p for p in files if p.stem == args.replica]
        if not files:
            names = ", ".join(p.stem for p in sorted(d.glob("*.log")) if p.stem != "supervisor")
            raise UsageError(f"run {rid} has no replica {args.replica!r} (replicas: {names})")
    console = Console([p.stem for p in files], sys.stdout, None if args.colour == "auto" else args.colour, live=False)
    single = len(files) == 1 and bool(args.replica)
    readers = {}
    for p in files:
        try:
            readers[p] = LogReader(p)
        except OSError as exc:  # a link (O_NOFOLLOW) or unreadable: not a log trainspec saved
            print(neutralise(f"trainspec: skipping {p}: {exc.strerror}", False), file=sys.stderr)

    def show(lines) -> None:
        for t, name, line in lines:
            text = f"{stamp_text(t)} {line}" if args.timestamps else line
            if single:
                print(neutralise(text, False), flush=True)
            else:
                console.log(name, text)

    try:
        show(select({r.name: r.read() for r in readers.values()}, args.tail, since))
        while args.follow:
            got = False
            batch = {r.name: r.read() for r in readers.values()}
            if any(batch.values()):
                got = True
                show(select(batch, None, since))
            st = read_state(d) or {}
            if st.get("finished") and not got:
                return 0
            for p in d.glob("*.log"):
                if p not in readers and p.name != "supervisor.log" and (not args.replica or p.stem == args.replica):
                    with contextlib.suppress(OSError):
                        readers[p] = LogReader(p)
            if not got:
                time.sleep(0.3)
    except KeyboardInterrupt:
        return 0
    finally:
        for r in readers.values():
            r.close()
    return 0
