"""One ContainerSpec, every engine call through the adapter (adapters/base.py): on the real Docker and
the real Podman, a container made from the same spec carries each of its fields, through Docker's
create API and (Podman) through libpod's own; the adapter's failures come out as the emulator's own
errors; and everything is found and removed by its labels."""

from __future__ import annotations

import os
import uuid

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.adapters.base import (
    RUN_ID,
    STATE_DIR,
    ContainerSpec,
    EngineNotFound,
    Mount,
    labels,
)
from trainspec.emulator.adapters.choice import choose
from trainspec.emulator.adapters.engines import connect


def _adapter(engine):
    return connect(2, choose(engine.name))


def _spec(run_id: str, state: str, image: str, bind: str, volume: str, **over) -> ContainerSpec:
    fields = dict(
        name=f"{run_id}-worker-0", image=image, network=run_id, ip="", hostname="worker-0",
        entrypoint=["/bin/sh", "-c"], command=["sleep 30"], env={"RANK": "0", "WORLD": "2"},
        working_dir="/tmp", labels=labels(run_id, "specjob", "", state, **{"trainspec.dev/replica": "worker-0"}),
        aliases=["worker-0.specjob"], extra_hosts={"peer.specjob": "10.9.9.9"},
        dns=["127.0.0.1"], dns_options=["timeout:1"],
        mounts=[Mount("/data", bind, "bind", True), Mount("/scratch", volume, "volume", False)],
        tmpfs={"/secrets": "size=1m"}, nano_cpus=500_000_000, memory=64 * 2**20, pids=77,
        user="1000:1000", read_only=True, security_opt=["no-new-privileges"], cap_drop=["NET_RAW"],
        group_add=["1234"])
    fields.update(over)
    return ContainerSpec(**fields)  # type: ignore[arg-type]


def _check(inspect: dict, bind: str, volume: str) -> None:
    """The fields of _spec, as the engine recorded them."""
    config, host = inspect["Config"], inspect["HostConfig"]
    assert config["Entrypoint"] == ["/bin/sh", "-c"] and config["Cmd"] == ["sleep 30"]
    assert {"RANK=0", "WORLD=2"} <= set(config["Env"])
    assert config["WorkingDir"] == "/tmp" and config["Hostname"] == "worker-0" and config["User"] == "1000:1000"
    assert config["Labels"]["trainspec.dev/replica"] == "worker-0"
    assert host["Init"] is True and host["ReadonlyRootfs"] is True
    assert host["Memory"] == 64 * 2**20 and host["PidsLimit"] == 77 and host["NanoCpus"] == 500_000_000
    assert "no-new-privileges" in " ".join(host["SecurityOpt"] or [])
    assert "NET_RAW" in " ".join(host["CapDrop"] or [])
    assert "1234" in [str(g) for g in host["GroupAdd"] or []]
    assert any("peer.specjob" in h and "10.9.9.9" in h for h in host["ExtraHosts"] or [])
    assert "/secrets" in (host.get("Tmpfs") or {}) or any(
        m.get("Destination") == "/secrets" for m in inspect.get("Mounts") or [])
    mounts = {m["Destination"]: m for m in inspect["Mounts"]}
    assert mounts["/data"]["Source"] == bind and mounts["/data"]["RW"] is False
    assert mounts["/scratch"]["Name"] == volume and mounts["/scratch"]["RW"] is True


@pytest.mark.docker
@pytest.mark.podman
def test_one_spec_makes_the_same_container_on_each_engine(engine, tmp_path):
    adapter = _adapter(engine)
    image = adapter.local_image(os.environ.get("TRAINSPEC_TEST_IMAGE", "trainspec-test:py3"))
    assert image is not None
    run_id = f"spec-{uuid.uuid4().hex[:8]}"
    state = str(tmp_path / ".trainspec")
    bind = str(tmp_path / "data")
    os.mkdir(bind)
    run_labels = labels(run_id, "specjob", "", state)
    try:
        subnet = adapter.create_network(run_id, run_labels, True, 2)
        ip = str(list(subnet.hosts())[1])
        volume = f"{run_id}-scratch"
        adapter.create_volume(volume, run_labels)
        made = {"compat": adapter.create_container(_spec(run_id, state, image, bind, volume, ip=ip))}
        if engine.name == "podman":  # the same spec through libpod's create (the path GPUs and an init path take)
            made["libpod"] = adapter.create_libpod(  # type: ignore[attr-defined]
                _spec(run_id, state, image, bind, volume, ip=str(list(subnet.hosts())[2]),
                      name=f"{run_id}-worker-1"))
        for cid in made.values():
            _check(engine.client.api.inspect_container(cid), bind, volume)
        with pytest.raises(UsageError, match="already exists"):
            adapter.create_container(_spec(run_id, state, image, bind, volume, ip=ip))
        cid = made["compat"]
        adapter.start(cid, "worker-0")
        assert (adapter.container_state(cid) or {}).get("Status") == "running"
        assert engine.client.api.inspect_container(cid)["NetworkSettings"]["Networks"][run_id]["IPAddress"] == ip
        code, out = adapter.exec(cid, ["sh", "-c", "echo $RANK; cat /etc/hosts"], 30)
        assert code == 0 and out.startswith("0\n") and "peer.specjob" in out, out
        adapter.kill(cid)
        listed = adapter.list_runs()[run_id]
        assert listed["state_dir"] == state and listed["networks"] == 1 and listed["volumes"] == 1
        assert {c["id"] for c in listed["containers"]} == set(made.values())
        adapter.remove_container(cid)
        assert adapter.container_state(cid) is None
        with pytest.raises(EngineNotFound):
            adapter.stop(cid, 1)
    finally:
        adapter.remove_run(run_id)
        adapter.close()
    left = engine.client.containers.list(all=True, filters={"label": f"{RUN_ID}={run_id}"})
    assert not left and not engine.client.networks.list(filters={"label": f"{STATE_DIR}={state}"})


@pytest.mark.parametrize("adapter_name", ["docker", "podman"])
def test_an_engine_that_does_not_answer_is_an_unreachable_engine_error(tmp_path, adapter_name):
    """The client's connection failure comes out of the adapter as the emulator's own error, marked
    unreachable (what the engine layer reads as a lost daemon), never as a docker or requests type."""
    import docker

    from trainspec.emulator.adapters.base import EngineError
    from trainspec.emulator.adapters.engines import ADAPTERS

    url = f"unix://{tmp_path / 'nothing.sock'}"  # no engine listens here
    adapter = ADAPTERS[adapter_name](docker.DockerClient(base_url=url, version="1.41", timeout=5), url)
    for call in (adapter.ping, adapter.list_runs, lambda: adapter.container_state("c1"),
                 lambda: list(adapter.logs("c1"))):
        with pytest.raises(EngineError) as caught:
            call()
        assert caught.value.unreachable and type(caught.value).__module__.endswith("adapters.base")
    assert adapter.exec("c1", ["true"], 5)[0] is None  # a failed probe or hook, said, never raised
    adapter.close()
