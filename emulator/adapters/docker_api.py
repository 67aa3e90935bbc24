"""The Docker API, as both engines serve it (Podman through its compatible socket): the shared
implementation of the ContainerEngine interface (base.py) that the sibling adapters DockerEngine
(docker_engine.py) and PodmanEngine (podman_engine.py) build on, overriding what their engine does
its own way. Everything that talks to the engine, and nothing about job policy.

Every call goes through docker-py's low-level client, and every failure comes out as the emulator's
own (base.EngineError, EngineNotFound; a UsageError for what the user can act on): docker and
requests end in this folder.
"""

from __future__ import annotations

import functools
import ipaddress
import random
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

import docker
import docker.errors
import requests.exceptions
from docker.types import DeviceRequest
from docker.types import Mount as DockerMount

from ...compiler.errors import UsageError
from .base import (
    JOB,
    MANAGED,
    REPLICA,
    RUN_ID,
    STATE_DIR,
    SUPERVISOR,
    ContainerSpec,
    EngineError,
    EngineNotFound,
)
from .choice import EngineChoice

GPU_DRIVER_ERROR = "could not select device driver"
CDI_ERROR = "unresolvable CDI devices"           # Podman: a GPU id its CDI spec does not define
RLIMIT_ERROR = "error setting rlimit"            # Podman: its default ulimits above the host's hard limits
INIT_ERROR = "container-init binary not found"  # Podman without its init

# The client's failures: translated into base.EngineError at the seam.
CLIENT_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)

P = ParamSpec("P")
R = TypeVar("R")


def short(exc: object) -> str:
    """The first line of a client error (Docker's explanation when it gave one), for messages."""
    if isinstance(exc, docker.errors.APIError) and getattr(exc, "explanation", None):
        return str(exc.explanation)
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def translate(exc: BaseException) -> EngineError:
    """A client exception in the emulator's words."""
    if isinstance(exc, docker.errors.NotFound):
        return EngineNotFound(short(exc), status=404)
    if isinstance(exc, docker.errors.APIError):
        return EngineError(short(exc), status=exc.status_code)
    return EngineError(short(exc), unreachable=isinstance(exc, requests.exceptions.ConnectionError))


def translated(fn: Callable[P, R]) -> Callable[P, R]:
    """The client's exceptions out of `fn` as EngineError (UsageError and the rest pass unchanged)."""
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except CLIENT_ERRORS as exc:
            raise translate(exc) from None
    return wrapper


class _Events:
    """The engine's event stream, its failures translated (base.EventStream)."""

    def __init__(self, stream: Any):
        self._stream = stream

    def __iter__(self) -> Iterator[dict]:
        try:
            yield from self._stream
        except CLIENT_ERRORS as exc:
            raise translate(exc) from None

    def close(self) -> None:
        self._stream.close()


class DockerAPIEngine:
    """The Docker API's operations over one connection (docker-py's low-level client, never handed out).
    Not an engine itself: DockerEngine and PodmanEngine name theirs, and say how to reach and fill it."""

    name = ""
    title = "the container engine"
    daemon = "the container engine"  # as messages name what answers on the socket

    def __init__(self, client: docker.DockerClient, url: str):
        self._client = client
        self._api = client.api
        self.url = url

    @classmethod
    def connect(cls, choice: EngineChoice, replicas: int) -> docker.DockerClient:
        """A client with enough pooled connections for one log stream per replica."""
        pool = max(10, 3 * replicas + 10)
        return docker.DockerClient(base_url=choice.url, timeout=60, max_pool_size=pool)

    @classmethod
    def open(cls, choice: EngineChoice, replicas: int = 8) -> DockerAPIEngine:
        """An adapter whose engine answers, or a UsageError saying how to start it."""
        try:
            engine = cls(cls.connect(choice, replicas), choice.url)
            engine._client.ping()
            return engine
        except docker.errors.DockerException as exc:
            raise UsageError(cls.unreachable_message(choice, exc)) from None

    @classmethod
    def unreachable_message(cls, choice: EngineChoice, exc: BaseException) -> str:
        raise NotImplementedError

    def reconnect(self, replicas: int = 8) -> DockerAPIEngine:
        """A fresh client of the same engine (a forked supervisor must not share the parent's pool)."""
        return type(self).open(self.choice(), replicas)

    def choice(self) -> EngineChoice:
        return EngineChoice(self.name, self.url, True)

    @translated
    def ping(self) -> bool:
        return bool(self._client.ping())

    @translated
    def info(self) -> dict:
        return dict(self._client.info())

    @translated
    def version(self) -> dict:
        return dict(self._client.version())

    def close(self) -> None:
        self._client.close()

    # -- what the engines do differently (overridden) ------------------------------

    def init_problem(self) -> str | None:
        return None

    def gpu_problem(self, info: dict, wanted: int) -> str | None:
        return None

    def gpu_options(self, gpu_ids: Sequence[str]) -> dict[str, Any]:
        """create_host_config() arguments that hand these GPUs to one container."""
        return {"device_requests": device_requests(gpu_ids)}

    def image_help(self, images: list[str]) -> str:
        raise NotImplementedError

    # -- images -----------------------------------------------------------------

    @translated
    def local_image(self, image: str) -> str | None:
        try:
            self._api.inspect_image(image)
            return image
        except docker.errors.ImageNotFound:
            return None

    @translated
    def pull_image(self, image: str) -> None:
        self._client.images.pull(image)

    @translated
    def image_user(self, image: str) -> str:
        return str((self._api.inspect_image(image).get("Config") or {}).get("User") or "")

    # -- networks and volumes -----------------------------------------------------

    @translated
    def create_network(self, name: str, labels: Mapping[str, str], internal: bool,
                       hosts: int) -> ipaddress.IPv4Network:
        """A user-defined bridge on a subnet the run picks itself.

        The run picks the subnet so it can give replicas static addresses and
        write every replica into every hosts file (DOCKER-NOTES: removes the
        start-order DNS races). Docker refuses overlapping pools; we retry.
        """
        prefix = 24
        while (2 ** (32 - prefix)) - 3 < hosts and prefix > 16:
            prefix -= 1
        taken: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = list(host_networks())
        for net in self._api.networks():
            for cfg in ((net.get("IPAM") or {}).get("Config") or []):
                try:
                    taken.append(ipaddress.ip_network(cfg.get("Subnet", ""), strict=False))
                except ValueError:
                    pass
        rng = random.Random()
        last_error: Exception | None = None
        for _ in range(40):
            base = ipaddress.IPv4Network(f"10.{rng.randint(200, 254)}.{rng.randint(0, 255)}.0/{prefix}",
                                         strict=False)
            if any(base.overlaps(t) for t in taken if isinstance(t, ipaddress.IPv4Network)):
                continue
            gateway = str(base.network_address + 1)
            ipam = docker.types.IPAMConfig(pool_configs=[docker.types.IPAMPool(subnet=str(base), gateway=gateway)])
            try:
                self._client.networks.create(name, driver="bridge", internal=internal, ipam=ipam,
                                             labels=dict(labels), check_duplicate=True)
                return base
            except docker.errors.APIError as exc:
                last_error = exc
                if "overlap" in str(exc).lower():
                    taken.append(base)
                    continue
                raise UsageError(f"cannot create the run's network {name}: {short(exc)}") from None
        raise UsageError(f"cannot find a free subnet for the run's network ({short(last_error)})")

    @translated
    def create_volume(self, name: str, labels: Mapping[str, str]) -> None:
        self._api.create_volume(name, labels=dict(labels))

    # -- containers ---------------------------------------------------------------

    def create_container(self, spec: ContainerSpec) -> str:
        return self.create_compat(spec)

    @translated
    def create_compat(self, spec: ContainerSpec) -> str:
        """Create (not start) one container through the Docker API's create."""
        api = self._api
        host_config = api.create_host_config(
            init=spec.init,
            mounts=[DockerMount(m.target, m.source, type=m.type, read_only=m.read_only) for m in spec.mounts] or None,
            tmpfs=dict(spec.tmpfs) or None,
            nano_cpus=spec.nano_cpus, mem_limit=spec.memory, pids_limit=spec.pids,
            **(self.gpu_options(spec.gpu_ids) if spec.gpu_ids else {}),
            extra_hosts=dict(spec.extra_hosts) or None,
            dns=list(spec.dns) if spec.dns is not None else None,
            dns_opt=list(spec.dns_options) if spec.dns_options is not None else None,
            port_bindings=dict(spec.ports) or None,
            network_mode=spec.network,
            read_only=spec.read_only or None, security_opt=list(spec.security_opt) or None,
            cap_drop=list(spec.cap_drop) or None, group_add=list(spec.group_add) or None,
        )
        networking = api.create_networking_config({
            spec.network: api.create_endpoint_config(aliases=list(spec.aliases), ipv4_address=spec.ip),
        })
        try:
            created = api.create_container(
                spec.image, command=_list(spec.command), entrypoint=_list(spec.entrypoint), environment=dict(spec.env),
                working_dir=spec.working_dir or None, hostname=spec.hostname[:63], labels=dict(spec.labels),
                name=spec.name, host_config=host_config, networking_config=networking,
                ports=[(int(k.split("/")[0]), k.split("/")[1]) for k in spec.ports] or None, user=spec.user or None,
            )
        except docker.errors.APIError as exc:
            if name_taken(exc):
                raise UsageError(already_exists(spec.name)) from None
            raise UsageError(create_error_message(spec.name, exc)) from None
        return str(created["Id"])

    @translated
    def start(self, cid: str, what: str) -> None:
        try:
            self._api.start(cid)
        except docker.errors.APIError as exc:
            raise UsageError(start_error_message(what, exc)) from None

    @translated
    def stop(self, cid: str, timeout: int) -> None:
        self._api.stop(cid, timeout=timeout)

    @translated
    def kill(self, cid: str) -> None:
        self._api.kill(cid)

    @translated
    def remove_container(self, cid: str, volumes: bool = False) -> None:
        self._api.remove_container(cid, force=True, v=volumes)

    @translated
    def container_state(self, cid: str) -> dict | None:
        try:
            return dict(self._api.inspect_container(cid)["State"])
        except docker.errors.NotFound:
            return None

    def logs(self, cid: str) -> Iterator[bytes]:
        try:
            yield from self._api.logs(cid, stream=True, follow=True, stdout=True, stderr=True)
        except CLIENT_ERRORS as exc:
            raise translate(exc) from None

    def log_tail(self, cid: str, lines: int) -> bytes:
        try:
            out = self._api.logs(cid, stream=False, follow=False, stdout=True, stderr=True, tail=lines)
        except CLIENT_ERRORS as exc:
            raise translate(exc) from None
        return out if isinstance(out, bytes) else bytes(out or b"")

    def exec(self, cid: str, command: Sequence[str], timeout: float) -> tuple[int | None, str]:
        """Run a command in a container; (None, reason) on timeout or error."""
        result: dict[str, Any] = {}
        api = self._api

        def target() -> None:
            try:
                ex = api.exec_create(cid, list(command), stdout=True, stderr=True)
                out = api.exec_start(ex["Id"])
                result["out"] = out.decode(errors="replace") if isinstance(out, bytes) else str(out)
                result["code"] = api.exec_inspect(ex["Id"]).get("ExitCode")
            except Exception as exc:  # noqa: BLE001 - any failure is a failed probe/hook
                result["error"] = short(exc)

        t = threading.Thread(target=target, daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive():
            return None, f"timed out after {timeout:g}s"
        if "error" in result:
            return None, result["error"]
        return result.get("code"), result.get("out", "")

    @translated
    def events(self, run_id: str) -> _Events:
        return _Events(self._api.events(decode=True, filters={
            "type": "container", "label": f"{RUN_ID}={run_id}", "event": ["die", "oom"]}))

    # -- cleanup and listing, by label ----------------------------------------------

    @translated
    def remove_replica(self, run_id: str, replica: str) -> None:
        """One pod's containers and emptyDir volumes (the run's network stays)."""
        api = self._api
        by_label = {"label": [f"{RUN_ID}={run_id}", f"{REPLICA}={replica}"]}
        for c in api.containers(all=True, filters=by_label):
            try:
                api.remove_container(c["Id"], force=True, v=True)
            except docker.errors.NotFound:
                pass
        for vol in (api.volumes(filters=by_label) or {}).get("Volumes") or []:
            try:
                api.remove_volume(vol["Name"], force=True)
            except docker.errors.NotFound:
                pass

    @translated
    def remove_run(self, run_id: str) -> tuple[int, int, int]:
        """Force-remove every container, network and volume of a run (by label)."""
        api = self._api
        from ..host.filesvol import LABEL, remove

        files_dirs = {(c.get("Labels") or {}).get(LABEL)
                      for c in api.containers(all=True, filters=_label_filter(run_id))}
        n_containers = self.remove_containers(run_id)
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

    @translated
    def remove_containers(self, run_id: str) -> int:
        """Force-remove (kill and remove) every container of a run, in parallel."""
        api = self._api
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

    @translated
    def list_runs(self) -> dict[str, dict]:
        """run id → {job, supervisor, state_dir, containers: [...], networks: n, volumes: n}."""
        runs: dict[str, dict] = {}
        api = self._api
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


def _list(args: Sequence[str] | None) -> list[str] | None:
    return list(args) if args is not None else None


def _label_filter(run_id: str | None) -> dict:
    return {"label": [f"{RUN_ID}={run_id}" if run_id else f"{MANAGED}=trainspec"]}


def _run_entry(lab: dict) -> dict:
    return {"job": lab.get(JOB, "?"), "supervisor": lab.get(SUPERVISOR, ""), "state_dir": lab.get(STATE_DIR, ""),
            "containers": [], "networks": 0, "volumes": 0}


def host_networks() -> list[ipaddress.IPv4Network]:
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


def device_requests(gpu_ids: Sequence[str]) -> list[DeviceRequest]:
    # Explicit ids, not a count: replicas get disjoint GPUs.
    return [DeviceRequest(driver="nvidia", device_ids=list(gpu_ids), capabilities=[["gpu"]])]


def name_taken(exc: docker.errors.APIError) -> bool:
    """The create failed because the name is taken: Docker says 409, Podman (either API) may say 500."""
    return exc.status_code == 409 or "already in use" in short(exc)


def already_exists(name: str) -> str:
    return f"a container named {name} already exists; remove it or run `trainspec gc`"


def create_error_message(name: str, exc: Exception) -> str:
    text = short(exc)
    if INIT_ERROR in text:  # Podman: --init needs its init binary, a package Debian only recommends
        return (f"cannot create container {name}: Podman has no init binary for --init ({text}); install "
                "catatonit (`sudo apt-get install catatonit`), or set init_path in /etc/containers/containers.conf")
    return f"cannot create container {name}: {text}"


def start_error_message(name: str, exc: Exception) -> str:
    text = short(exc)
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

