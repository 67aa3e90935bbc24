"""The Docker adapter (DockerEngine), and the Docker-API operations both engines serve (Podman through its
compatible socket): everything that talks to the engine, and nothing about job policy.

Every object the emulator creates (containers, networks, volumes) carries the
labels below, so a run — even one whose CLI was killed with SIGKILL — can be
found and removed by label alone (`trainspec down`, `trainspec gc`).
"""

from __future__ import annotations

import ipaddress
import os
import random
import socket
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.types import DeviceRequest, Mount

from ...compiler.errors import UsageError
from .choice import DOCKER_SOCKET, EngineChoice

# The engine's failures under the adapter's names: the modules above catch these and never
# import docker or requests themselves (a Podman adapter, speaking the same API, names its own).
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)
APIError = docker.errors.APIError
NotFound = docker.errors.NotFound


def unreachable(exc: BaseException) -> bool:
    """The engine did not answer at all (as opposed to answering with an error)."""
    return isinstance(exc, requests.exceptions.ConnectionError)


def mount(target: str, source: str, *, type: str, read_only: bool) -> Mount:  # noqa: A002 - the API's word
    """A bind or volume mount in the engine's create-container form."""
    return Mount(target, source, type=type, read_only=read_only)

MANAGED = "trainspec.dev/managed-by"
RUN_ID = "trainspec.dev/run-id"
JOB = "trainspec.dev/job"
REPLICA = "trainspec.dev/replica"
CONTAINER = "trainspec.dev/container"
SUPERVISOR = "trainspec.dev/supervisor"
STATE_DIR = "trainspec.dev/state-dir"

GPU_DRIVER_ERROR = "could not select device driver"
CDI_ERROR = "unresolvable CDI devices"           # Podman: a GPU id its CDI spec does not define
RLIMIT_ERROR = "error setting rlimit"            # Podman: its default ulimits above the host's hard limits
INIT_ERROR = "container-init binary not found"  # Podman without catatonit


class DockerEngine(docker.DockerClient):
    """Docker, through its SDK: the client every module above is handed (as `run.client`), plus what
    the engines do differently (ContainerEngine in base.py). PodmanEngine (podman_engine.py) speaks the
    same API over Podman's compatible socket and overrides only what Podman does its own way."""

    name = "docker"
    title = "Docker"
    daemon = "the Docker daemon"  # as messages name what answers on the socket
    url = DOCKER_SOCKET

    @classmethod
    def open(cls, choice: EngineChoice, replicas: int = 8) -> DockerEngine:
        """A client with enough pooled connections for one log stream per replica, answering."""
        pool = max(10, 3 * replicas + 10)
        # The Docker client's own settings (DOCKER_HOST with its TLS variables, else the docker context)
        # apply when they lead to the address chosen; any other address is used as it is.
        from_env = cls.name == "docker" and choice.url == (os.environ.get("DOCKER_HOST") or DOCKER_SOCKET)
        try:
            client = (cls.from_env(timeout=60, max_pool_size=pool) if from_env
                      else cls(base_url=choice.url, timeout=60, max_pool_size=pool))
            client.url = choice.url
            client.ping()
            return client
        except docker.errors.DockerException as exc:
            raise UsageError(cls.unreachable_message(choice, exc)) from None

    @classmethod
    def unreachable_message(cls, choice: EngineChoice, exc: BaseException) -> str:
        text = (
            f"cannot reach the Docker daemon at {choice.url} ({_short(exc)}); start it (`sudo systemctl start docker`, "
            "or `sudo service docker start`, or run `sudo dockerd` in another terminal; rootless Docker: "
            "`systemctl --user start docker`), or point DOCKER_HOST at a running daemon "
            "(e.g. unix:///run/user/$UID/docker.sock)")
        if not choice.explicit and not choice.probe:  # nothing found at all: Podman would do too
            text += ("; or use Podman: start its socket (`sudo podman system service --time=0 "
                     "unix:///run/podman/podman.sock &`, rootless `systemctl --user start podman.socket`) "
                     "and it is chosen, or pass --engine podman")
        return text

    def reconnect(self, replicas: int = 8) -> DockerEngine:
        """A fresh client of the same engine (a forked supervisor must not share the parent's pool)."""
        return type(self).open(self.choice(), replicas)

    def choice(self) -> EngineChoice:
        return EngineChoice(self.name, self.url, True)

    # -- what differs between engines ------------------------------------------------

    def init_problem(self) -> str | None:
        """Docker ships its init (docker-init) with the daemon."""
        return None

    def gpu_problem(self, info: dict, wanted: int) -> str | None:
        """Why this engine cannot hand GPUs to containers, or None."""
        if has_nvidia_runtime(info):
            return None
        return (f"the job asks for {wanted} GPUs but this Docker daemon has no NVIDIA runtime "
                f"(runtimes: {', '.join(sorted(info.get('Runtimes') or {})) or 'none'}); install the NVIDIA "
                "Container Toolkit and restart dockerd, or run with --cpu-only for a CPU dry-run")

    def gpu_options(self, gpu_ids: list[str]) -> dict[str, Any]:
        """create_host_config() arguments that hand these GPUs to one container."""
        return {"device_requests": device_requests(gpu_ids)}

    def local_image(self, image: str) -> str | None:
        """The name the engine knows a local image by, or None when it has none."""
        try:
            self.api.inspect_image(image)
            return image
        except docker.errors.ImageNotFound:
            return None

    def image_help(self, images: list[str]) -> str:
        """How to get missing images into this engine (for the missing-images error)."""
        return "`docker pull`/`docker build`/`docker load` it first"

    def create_container(self, **kw: Any) -> str:
        return _create_compat(self, **kw)


def labels(run_id: str, job: str, supervisor: str, state_dir: str, **extra: str) -> dict[str, str]:
    out = {MANAGED: "trainspec", RUN_ID: run_id, JOB: job, SUPERVISOR: supervisor, STATE_DIR: state_dir}
    out.update(extra)
    return out


def has_nvidia_runtime(info: dict) -> bool:
    return "nvidia" in (info.get("Runtimes") or {})


def missing_images(client: DockerEngine, images: Iterable[str]) -> list[str]:
    return [image for image in images if client.local_image(image) is None]


# -- networks ---------------------------------------------------------------

def _host_networks() -> list[ipaddress.IPv4Network]:
    """Networks routed on the host: a run's subnet must not shadow any of them."""
    nets = []
    try:
        with open("/proc/net/route") as f:
            next(f)
            for line in f:
                parts = line.split()
                dest = ipaddress.IPv4Address(int(parts[1], 16).to_bytes(4, "little"))
                mask = ipaddress.IPv4Address(int(parts[7], 16).to_bytes(4, "little"))
                if int(dest):
                    nets.append(ipaddress.IPv4Network(f"{dest}/{mask}", strict=False))
    except (OSError, ValueError, StopIteration):
        pass
    return nets


def create_network(client: docker.DockerClient, name: str, label_map: dict[str, str], internal: bool,
                   hosts: int) -> tuple[Any, ipaddress.IPv4Network]:
    """A user-defined bridge on a subnet the run picks itself.

    The run picks the subnet so it can give replicas static addresses and
    write every replica into every hosts file (DOCKER-NOTES: removes the
    start-order DNS races). Docker refuses overlapping pools; we retry.
    """
    prefix = 24
    while (2 ** (32 - prefix)) - 3 < hosts and prefix > 16:
        prefix -= 1
    taken: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = list(_host_networks())
    for net in client.api.networks():
        for cfg in ((net.get("IPAM") or {}).get("Config") or []):
            try:
                taken.append(ipaddress.ip_network(cfg.get("Subnet", ""), strict=False))
            except ValueError:
                pass
    rng = random.Random()
    last_error: Exception | None = None
    for _ in range(40):
        base = ipaddress.IPv4Network(f"10.{rng.randint(200, 254)}.{rng.randint(0, 255)}.0/{prefix}", strict=False)
        if any(base.overlaps(t) for t in taken if isinstance(t, ipaddress.IPv4Network)):
            continue
        gateway = str(base.network_address + 1)
        ipam = docker.types.IPAMConfig(pool_configs=[docker.types.IPAMPool(subnet=str(base), gateway=gateway)])
        try:
            network = client.networks.create(name, driver="bridge", internal=internal, ipam=ipam,
                                              labels=label_map, check_duplicate=True)
            return network, base
        except docker.errors.APIError as exc:
            last_error = exc
            if "overlap" in str(exc).lower():
                taken.append(base)
                continue
            raise UsageError(f"cannot create the run's network {name}: {_short(exc)}") from None
    raise UsageError(f"cannot find a free subnet for the run's network ({_short(last_error)})")


# -- containers -------------------------------------------------------------

def device_requests(gpu_ids: list[str]) -> list[DeviceRequest]:
    # Explicit ids, not a count: replicas get disjoint GPUs.
    return [DeviceRequest(driver="nvidia", device_ids=list(gpu_ids), capabilities=[["gpu"]])]


def create_container(client: DockerEngine, **kw: Any) -> str:
    """Create (not start) one container; the engine decides how its GPUs are passed."""
    return client.create_container(**kw)


def _create_compat(client: DockerEngine, *, name: str, image: str, entrypoint: list[str] | None,
                     cmd: list[str] | None, env: dict[str, str], working_dir: str | None,
                     hostname: str, label_map: dict[str, str], network: str, ip: str, aliases: list[str],
                     extra_hosts: dict[str, str], binds: dict[str, dict], mounts: list[Any],
                     tmpfs: dict[str, str], nano_cpus: int | None, mem_limit: int | None,
                     pids_limit: int | None,
                     gpu_ids: list[str] | None, port_bindings: dict[str, Any], dns: list[str] | None,
                     dns_opt: list[str] | None, user: str | None = None, read_only: bool = False,
                     security_opt: list[str] | None = None, cap_drop: list[str] | None = None,
                     group_add: list[str] | None = None) -> str:
    api = client.api
    host_config = api.create_host_config(
        init=True,  # a Python PID 1 ignores SIGTERM: docker stop would wait the whole grace period
        binds=binds or None, mounts=mounts or None, tmpfs=tmpfs or None,
        nano_cpus=nano_cpus, mem_limit=mem_limit, pids_limit=pids_limit,
        **(client.gpu_options(gpu_ids) if gpu_ids else {}),
        extra_hosts=extra_hosts or None, dns=dns, dns_opt=dns_opt,
        port_bindings=port_bindings or None,
        network_mode=network,
        read_only=read_only or None, security_opt=security_opt or None, cap_drop=cap_drop or None,
        group_add=group_add or None,
    )
    networking = api.create_networking_config({
        network: api.create_endpoint_config(aliases=aliases, ipv4_address=ip),
    })
    try:
        created = api.create_container(
            image, command=cmd, entrypoint=entrypoint, environment=env, working_dir=working_dir or None,
            hostname=hostname[:63], labels=label_map, name=name, host_config=host_config,
            networking_config=networking,
            ports=[(int(k.split("/")[0]), k.split("/")[1]) for k in port_bindings] or None, user=user or None,
        )
    except docker.errors.APIError as exc:
        if exc.status_code == 409:
            raise UsageError(f"a container named {name} already exists; remove it or run `trainspec gc`") from None
        raise UsageError(create_error_message(name, exc)) from None
    return created["Id"]


def create_error_message(name: str, exc: Exception) -> str:
    text = _short(exc)
    if INIT_ERROR in text:  # Podman: --init needs its init binary, a package Debian only recommends
        return (f"cannot create container {name}: Podman has no init binary for --init ({text}); install "
                "catatonit (`sudo apt-get install catatonit`), or set init_path in /etc/containers/containers.conf")
    return f"cannot create container {name}: {text}"


def start_error_message(name: str, exc: Exception) -> str:
    text = _short(exc)
    if GPU_DRIVER_ERROR in text:
        return (f"cannot start {name}: Docker has no NVIDIA GPU runtime ({text}); install the NVIDIA "
                "Container Toolkit and restart dockerd, or run with --cpu-only")
    if CDI_ERROR in text:
        return (f"cannot start {name}: Podman's CDI spec does not define the GPUs it was given ({text}); "
                "regenerate it (`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`, "
                "`nvidia-ctk cdi list` shows the names), pass --gpus with ids it lists, or run with --cpu-only")
    if RLIMIT_ERROR in text:
        return (f"cannot start {name}: Podman's default ulimits are above this machine's hard limits ({text}); "
                "set them in /etc/containers/containers.conf: [containers] default_ulimits = "
                '["nofile=N:N", "nproc=M:M"] with N from `ulimit -Hn` and M at most `ulimit -Hu` and '
                "/proc/sys/kernel/pid_max, then restart the Podman service")
    if "port is already allocated" in text or "address already in use" in text:
        return f"cannot start {name}: a host port it publishes is already in use ({text})"
    return f"cannot start {name}: {text}"


def exec_in(client: docker.DockerClient, cid: str, command: list[str], timeout: float) -> tuple[int | None, str]:
    """Run a command in a container; (None, reason) on timeout or error."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            ex = client.api.exec_create(cid, command, stdout=True, stderr=True)
            out = client.api.exec_start(ex["Id"])
            result["out"] = out.decode(errors="replace") if isinstance(out, bytes) else str(out)
            result["code"] = client.api.exec_inspect(ex["Id"]).get("ExitCode")
        except Exception as exc:  # noqa: BLE001 - any failure is a failed probe/hook
            result["error"] = _short(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        return None, f"timed out after {timeout:g}s"
    if "error" in result:
        return None, result["error"]
    return result.get("code"), result.get("out", "")


def host_port_free(port: int, protocol: str = "TCP", host_ip: str = "") -> bool:
    ip = host_ip or "0.0.0.0"
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    kind = socket.SOCK_DGRAM if protocol == "UDP" else socket.SOCK_STREAM
    try:
        with socket.socket(family, kind) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((ip, port))
            return True
    except OSError:
        return False


# -- cleanup and listing ----------------------------------------------------

def _label_filter(run_id: str | None) -> dict:
    return {"label": [f"{RUN_ID}={run_id}" if run_id else f"{MANAGED}=trainspec"]}


def remove_run(client: docker.DockerClient, run_id: str) -> tuple[int, int, int]:
    """Force-remove every container, network and volume of a run (by label)."""
    api = client.api
    from ..host.filesvol import LABEL, remove

    files_dirs = {(c.get("Labels") or {}).get(LABEL) for c in api.containers(all=True, filters=_label_filter(run_id))}
    n_containers = remove_containers(client, run_id)
    for path in files_dirs - {None}:
        remove(str(path), run_id)  # configMap/secret files on the tmpfs (this run's only): gone with the containers
    n_networks = 0
    for net in api.networks(filters=_label_filter(run_id)):
        try:
            api.remove_network(net["Id"])
            n_networks += 1
        except docker.errors.NotFound:
            pass
    n_volumes = 0
    for vol in (api.volumes(filters=_label_filter(run_id)) or {}).get("Volumes") or []:
        try:
            api.remove_volume(vol["Name"], force=True)
            n_volumes += 1
        except docker.errors.NotFound:
            pass
    return n_containers, n_networks, n_volumes


def remove_containers(client: docker.DockerClient, run_id: str) -> int:
    """Force-remove (kill and remove) every container of a run, in parallel."""
    api = client.api
    containers = api.containers(all=True, filters=_label_filter(run_id))

    def rm(c: dict) -> int:
        try:
            api.remove_container(c["Id"], force=True, v=True)
            return 1
        except docker.errors.NotFound:
            return 0
        except docker.errors.APIError as exc:
            if "already in progress" in str(exc):
                return 0
            raise

    # In parallel: the daemon's cost is per container (DOCKER-NOTES: 32 in ~2 s this way).
    with ThreadPoolExecutor(max_workers=max(1, min(len(containers), 32))) as pool:
        return sum(pool.map(rm, containers))


def list_runs(client: docker.DockerClient) -> dict[str, dict]:
    """run id → {job, supervisor, state_dir, containers: [...], networks: n}."""
    runs: dict[str, dict] = {}
    api = client.api
    for c in api.containers(all=True, filters=_label_filter(None)):
        lab = c.get("Labels") or {}
        run = runs.setdefault(lab.get(RUN_ID, "?"), _run_entry(lab))
        run["containers"].append({"id": c["Id"], "name": (c.get("Names") or ["?"])[0].lstrip("/"),
                                  "state": c.get("State"),
                                  "status": c.get("Status"), "replica": lab.get(REPLICA, ""),
                                  "created": c.get("Created", 0)})
    for net in api.networks(filters=_label_filter(None)):
        lab = net.get("Labels") or {}
        runs.setdefault(lab.get(RUN_ID, "?"), _run_entry(lab))["networks"] += 1
    for vol in (api.volumes(filters=_label_filter(None)) or {}).get("Volumes") or []:
        lab = vol.get("Labels") or {}
        runs.setdefault(lab.get(RUN_ID, "?"), _run_entry(lab))["volumes"] += 1
    return runs


def _run_entry(lab: dict) -> dict:
    return {"job": lab.get(JOB, "?"), "supervisor": lab.get(SUPERVISOR, ""), "state_dir": lab.get(STATE_DIR, ""),
            "containers": [], "networks": 0, "volumes": 0}


def _short(exc: object) -> str:
    if isinstance(exc, docker.errors.APIError) and getattr(exc, "explanation", None):
        return str(exc.explanation)
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


short = _short  # the first line of a Docker error, for messages
