"""trainspec's own state is trusted only when trainspec made it (issue 32, item 1): no link on
the way to the state folder, its runs or volumes is followed; records carry this user's
signature; a planted or malformed record is refused, never crashed on; gc's sweep removes
only files folders of this user's runs, in a tmpfs root."""

from __future__ import annotations

import json
import os
import secrets
import time

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.host.filesvol import PREFIX, FilesDir, sweep, tmpfs_root
from trainspec.emulator.host.ownfs import Untrusted, own_dir
from trainspec.emulator.host.paths import make_dir_inside, resolve_bind
from trainspec.emulator.host.state import find_runs, load_state, write_state
from trainspec.emulator.model.job import Mount


def _record(rid: str, job: str = "demo") -> dict:
    return {"run_id": rid, "job": job, "started": time.time(), "supervisor": "", "replicas": []}


def test_a_link_at_any_depth_is_refused_and_nothing_is_made_through_it(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    for planted in (("st",), ("st", "volumes"), ("st", "volumes", "claim"), ("st", "volumes", "claim", "sub")):
        root = tmp_path / f"case{len(planted)}"
        *above, last = planted
        (root.joinpath(*above)).mkdir(parents=True)
        root.joinpath(*planted).symlink_to(target)
        with pytest.raises(Untrusted, match="is a symlink"):
            own_dir(root / "st", "volumes", "claim", "sub", "deeper")
    assert list(target.iterdir()) == []


def test_volume_folders_refuse_a_planted_volumes_link(tmp_path):
    """The finding: `.trainspec/volumes -> /` made every named volume a host folder."""
    state = tmp_path / ".trainspec"
    state.mkdir()
    (state / "volumes").symlink_to(tmp_path / "host")
    (tmp_path / "host").mkdir()
    with pytest.raises(UsageError, match="volumes is a symlink"):
        make_dir_inside(str(state / "volumes"), str(state / "volumes" / "etc"))
    assert not (tmp_path / "host" / "etc").exists()
    # ... and at mount time, even when the folder was made before the link was planted
    m = Mount("/x", "bind", str(state / "volumes" / "etc"), root=str(state / "volumes" / "etc"))
    with pytest.raises(UsageError, match="leads outside"):
        resolve_bind(m, str(state), allow_host_path=True)


def test_a_claim_folder_made_inside_is_what_docker_gets(tmp_path):
    state = tmp_path / "st"
    make_dir_inside(str(state / "volumes"), str(state / "volumes" / "c" / "a"))
    m = Mount("/x", "bind", str(state / "volumes" / "c" / "a"), root=str(state / "volumes" / "c"))
    assert resolve_bind(m, str(state), allow_host_path=False) == str(state / "volumes" / "c" / "a")
    assert oct((state / "volumes" / "c").stat().st_mode & 0o777) == "0o755"   # readable by a non-root user
    assert oct((state / "volumes").stat().st_mode & 0o777) == "0o700" and oct(state.stat().st_mode & 0o777) == "0o700"


def test_records_round_trip_and_planted_ones_are_refused(tmp_path):
    state = tmp_path / ".trainspec"
    run = state / "runs" / "demo-aaaaaa"
    own_dir(state, "runs", run.name)
    write_state(run, _record(run.name))
    assert load_state(run)["job"] == "demo"
    # planted: no signature (a committed file), a changed field, a genuine record copied to another name
    planted = state / "runs" / "demo-bbbbbb"
    planted.mkdir()
    (planted / "state.json").write_text(json.dumps(_record(planted.name)))
    with pytest.raises(Untrusted, match="no signature"):
        load_state(planted)
    doc = json.loads((run / "state.json").read_text())
    doc["job"] = "other"
    (planted / "state.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
    with pytest.raises(Untrusted, match="signature does not match"):
        load_state(planted)
    (planted / "state.json").write_bytes((run / "state.json").read_bytes())
    with pytest.raises(Untrusted, match="not its folder's"):
        load_state(planted)
    refused: dict[str, str] = {}
    assert [r["run_id"] for r in find_runs(state, refused)] == [run.name]
    assert list(refused) == [planted.name]


@pytest.mark.parametrize("content", [b"[" * 200_000, b"\xff\xfe", b'"just a string"', b"{}",
                                     b'{"mac": 1}', b'{"mac": "00", "run_id": ["x"]}'])
def test_malformed_records_are_refused_never_raised(tmp_path, content):
    d = tmp_path / "st" / "runs" / "x-1"
    d.mkdir(parents=True)
    (d / "state.json").write_bytes(content)
    refused: dict[str, str] = {}
    assert find_runs(tmp_path / "st", refused) == [] and "x-1" in refused


def test_a_run_folder_that_links_to_a_genuine_record_is_refused(tmp_path):
    """Hard to spot: the signature is valid (the record is one of yours, in another project), the
    link is one level down, on the run's own folder."""
    mine = tmp_path / "project-a" / ".trainspec"
    own_dir(mine, "runs", "demo-cccccc")
    write_state(mine / "runs" / "demo-cccccc", _record("demo-cccccc"))
    repo = tmp_path / "repo" / ".trainspec" / "runs"
    repo.mkdir(parents=True)
    (repo / "demo-cccccc").symlink_to(mine / "runs" / "demo-cccccc")
    refused: dict[str, str] = {}
    assert find_runs(repo.parent, refused) == [] and "symlink" in refused["demo-cccccc"]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder of another user needs root")
def test_someone_elses_state_folder_is_refused(tmp_path):
    (tmp_path / "st").mkdir()
    os.chown(tmp_path / "st", 4242, 4242)
    with pytest.raises(Untrusted, match="belongs to user 4242"):
        own_dir(tmp_path / "st", "runs")


def _tmpfs_or_skip() -> str:
    try:
        return tmpfs_root()
    except UsageError:
        pytest.skip("no tmpfs here")


def test_sweep_removes_only_its_own_runs_folders(tmp_path):
    root = _tmpfs_or_skip()
    state = tmp_path / "st"
    # a genuine dead run: swept
    files = FilesDir("mine-111111", record=str(state / "runs" / "mine-111111" / "files-dir"),
                     supervisor=lambda: "elsewhere-host:1:1")
    own_dir(state, "runs", "mine-111111")
    files.write("w", Mount("/s", "files", "s", True, [], secret=True))
    # victims: another run's folder, a folder outside the tmpfs, a link in the tmpfs root
    victim = os.path.join(root, f"{PREFIX}other-222222-{secrets.token_hex(8)}")
    os.mkdir(victim)
    outside = tmp_path / f"{PREFIX}x-333333-{secrets.token_hex(8)}"
    outside.mkdir()
    (tmp_path / "precious").mkdir()
    link = os.path.join(root, f"{PREFIX}lnk-444444-{secrets.token_hex(8)}")
    os.symlink(tmp_path / "precious", link)
    try:
        planted = {"other-222222": victim, "x-333333": str(outside), "lnk-444444": link,
                   "mine-555555": victim}   # a record under a name of its own, naming another run's folder
        for rid, path in planted.items():
            (state / "runs" / rid).mkdir(parents=True)
            (state / "runs" / rid / "files-dir").write_text(json.dumps({"path": path, "supervisor": ""}))
        refused: dict[str, str] = {}
        found = sweep(state, lambda rid, sup: False, refused=refused)
        assert found == [("mine-111111", files.path)] and not os.path.exists(str(files.path))
        assert sorted(refused) == sorted(planted)
        assert os.path.isdir(victim) and outside.is_dir() and (tmp_path / "precious").is_dir()
        assert os.path.islink(link)
    finally:
        os.rmdir(victim)
        os.unlink(link)
