"""Podman behind the same seam: its Docker-compatible API socket (`podman system service`), driven by
the Docker SDK like Docker, except where Podman does things its own way:

- GPUs: Podman hands devices to containers through CDI (`--device nvidia.com/gpu=0`), not Docker's
  DeviceRequests, and its compatible API passes neither on (PODMAN-NOTES; a CDI name in
  HostConfig.Devices fails as `stat nvidia.com/gpu=0: no such file`). A container with GPUs is
  therefore created through Podman's own API (libpod's containers/create), with the CDI names.
- local images: `docker save IMG | podman load` stores IMG as localhost/IMG; a run naming IMG finds it.
- error wording: the socket and how to start it; its default ulimits (CDI and rlimit texts are
  recognised in docker_engine.start_error_message, which sees only the error).
"""

from __future__ import annotations

import glob
import os
from typing import Any

import docker.errors

from ...compiler.errors import UsageError
from .choice import EngineChoice
from .docker_engine import DockerEngine, create_error_message, short
from .podman_init import podman_init

CDI_KIND = "nvidia.com/gpu"
# Where Podman reads CDI specs (the CDI default; static then generated ones).
CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
LIBPOD_API = "v4.0.0"  # the oldest libpod API with the create fields used here; newer servers accept it


def cdi_names(gpu_ids: list[str]) -> list[str]:
    """The CDI device names for GPU ids: nvidia.com/gpu=0, ... (`all` for every GPU)."""
    return [f"{CDI_KIND}={i}" for i in gpu_ids]


def cdi_specs(dirs: tuple[str, ...] = CDI_DIRS) -> dict[str, list[str]]:
    """spec file -> the device names it defines, for the CDI kind of NVIDIA GPUs."""
    import json

    import yaml

    found: dict[str, list[str]] = {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.yaml")) + glob.glob(os.path.join(d, "*.json"))):
            try:
                with open(path) as f:
                    doc = json.load(f) if path.endswith(".json") else yaml.safe_load(f)
            except (OSError, ValueError, yaml.YAMLError):
                continue
            if isinstance(doc, dict) and doc.get("kind") == CDI_KIND:
                found[path] = [str(dev.get("name")) for dev in doc.get("devices") or [] if isinstance(dev, dict)]
    return found


class PodmanEngine(DockerEngine):
    name = "podman"
    title = "Podman"
    daemon = "the Podman service"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._local: dict[str, str] = {}  # image as the job names it -> as Podman stores it
        self.init_path: str | None = None  # another init than Podman's own, for every container (podman_init.py)

    @classmethod
    def unreachable_message(cls, choice: EngineChoice, exc: BaseException) -> str:
        return (f"cannot reach Podman at {choice.url} ({short(exc)}); start its API socket (`sudo podman "
                "system service --time=0 unix:///run/podman/podman.sock &`; rootless: `systemctl --user start "
                "podman.socket`), or point CONTAINER_HOST at a running one "
                "(e.g. unix://$XDG_RUNTIME_DIR/podman/podman.sock)")

    def gpu_problem(self, info: dict, wanted: int) -> str | None:
        if self.url.startswith("unix://") and not cdi_specs():
            return (f"the job asks for {wanted} GPUs but Podman finds no CDI spec for {CDI_KIND} (in "
                    f"{' or '.join(CDI_DIRS)}); Podman passes GPUs as CDI devices ({CDI_KIND}=0, ...): generate "
                    "the spec with the NVIDIA Container Toolkit (`sudo nvidia-ctk cdi generate "
                    "--output=/etc/cdi/nvidia.yaml`), or run with --cpu-only for a CPU dry-run")
        return None  # a remote Podman reads its own host's specs: its create says if one is missing

    def gpu_options(self, gpu_ids: list[str]) -> dict[str, Any]:
        return {"devices": cdi_names(gpu_ids)}

    def init_problem(self) -> str | None:
        """Podman's init, or another this host has (podman_init.py); what to install when there is none.
        A remote Podman (ssh, tcp) has its own host's: its create says if one is missing."""
        if not self.url.startswith("unix://"):
            return None
        self.init_path, problem = podman_init()
        return problem or None

    def local_image(self, image: str) -> str | None:
        for candidate in (image, *self._short_name_forms(image)):
            try:
                self.api.inspect_image(candidate)
            except docker.errors.ImageNotFound:
                continue
            self._local[image] = candidate
            return candidate
        return None

    @staticmethod
    def _short_name_forms(image: str) -> tuple[str, ...]:
        """A name without a registry, as Podman stores a loaded or locally built image: localhost/NAME."""
        first = image.split("/", 1)[0]
        has_registry = "/" in image and ("." in first or ":" in first or first == "localhost")
        return () if has_registry else (f"localhost/{image}",)

    def image_help(self, images: list[str]) -> str:
        example = images[0] if images else "IMAGE"
        return (f"`podman pull`/`podman build`/`podman load` it first (Podman keeps its own images: one "
                f"Docker has is moved with `docker save {example} | podman load`, and is then "
                f"localhost/{example.split('/')[-1]})")

    def create_container(self, **kw: Any) -> str:
        kw["image"] = self._local.get(kw["image"], kw["image"])
        if kw.get("gpu_ids") or self.init_path:  # CDI devices, an init path: fields of libpod's API only
            return create_libpod(self, **kw, init_path=self.init_path)
        return super().create_container(**kw)


def create_libpod(client: PodmanEngine, *, name: str, image: str, entrypoint: list[str] | None,
                  cmd: list[str] | None, env: dict[str, str], working_dir: str | None,
                  hostname: str, label_map: dict[str, str], network: str, ip: str, aliases: list[str],
                  extra_hosts: dict[str, str], binds: dict[str, dict], mounts: list[Any],
                  tmpfs: dict[str, str], nano_cpus: int | None, mem_limit: int | None,
                  pids_limit: int | None,
                  gpu_ids: list[str] | None, port_bindings: dict[str, Any], dns: list[str] | None,
                  dns_opt: list[str] | None, user: str | None = None, read_only: bool = False,
                  security_opt: list[str] | None = None, cap_drop: list[str] | None = None,
                  group_add: list[str] | None = None, init_path: str | None = None) -> str:
    """The same container as docker_engine._create_compat makes, through libpod's API: the one that
    takes CDI devices. The body is what `podman create` would send (specgen)."""
    spec = libpod_spec(name=name, image=image, entrypoint=entrypoint, cmd=cmd, env=env, working_dir=working_dir,
                       hostname=hostname, label_map=label_map, network=network, ip=ip, aliases=aliases,
                       extra_hosts=extra_hosts, binds=binds, mounts=mounts, tmpfs=tmpfs, nano_cpus=nano_cpus,
                       mem_limit=mem_limit, pids_limit=pids_limit, gpu_ids=gpu_ids or [],
                       port_bindings=port_bindings, dns=dns,
                       dns_opt=dns_opt, user=user, read_only=read_only, security_opt=security_opt,
                       cap_drop=cap_drop, group_add=group_add, init_path=init_path)
    api = client.api
    try:
        response = api.post(f"{api.base_url}/{LIBPOD_API}/libpod/containers/create", json=spec)
        api._raise_for_status(response)
        return str(response.json()["Id"])
    except docker.errors.APIError as exc:
        text = short(exc)
        if exc.status_code == 409 or "already in use" in text:
            raise UsageError(f"a container named {name} already exists; remove it or run `trainspec gc`") from None
        if "CDI" in text:
            raise UsageError(f"cannot create container {name}: Podman cannot resolve its GPUs "
                             f"{', '.join(cdi_names(gpu_ids or []))} ({text}); `nvidia-ctk cdi list` shows the "
                             "names its CDI spec defines: pass --gpus with those ids, regenerate the spec "
                             "(`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`), or run with "
                             "--cpu-only") from None
        raise UsageError(create_error_message(name, exc)) from None


def libpod_spec(*, name: str, image: str, entrypoint: list[str] | None, cmd: list[str] | None,
                env: dict[str, str], working_dir: str | None, hostname: str, label_map: dict[str, str],
                network: str, ip: str, aliases: list[str], extra_hosts: dict[str, str], binds: dict[str, dict],
                mounts: list[Any], tmpfs: dict[str, str], nano_cpus: int | None, mem_limit: int | None,
                pids_limit: int | None, gpu_ids: list[str], port_bindings: dict[str, Any], dns: list[str] | None,
                dns_opt: list[str] | None, user: str | None, read_only: bool, security_opt: list[str] | None,
                cap_drop: list[str] | None, group_add: list[str] | None,
                init_path: str | None = None) -> dict[str, Any]:
    """Podman's specgen for one container: the fields docker_engine._create_compat sets, in libpod's words."""
    if binds:
        raise ValueError("binds are passed as mounts")  # the emulator only uses the mount API
    unknown = [o for o in security_opt or [] if o != "no-new-privileges"]
    if unknown:  # lossless or loud: an option this translation does not carry is refused, never dropped
        raise UsageError(f"{name}: security option {unknown[0]!r} cannot be passed to Podman with GPUs "
                         "(its own API); run with --cpu-only, or without the option")
    oci_mounts: list[dict[str, Any]] = []
    volumes: list[dict[str, Any]] = []
    for m in mounts:
        ro = bool(m.get("ReadOnly"))
        if m.get("Type") == "volume":
            volumes.append({"Name": m["Source"], "Dest": m["Target"], "Options": ["ro" if ro else "rw"]})
        else:
            oci_mounts.append({"destination": m["Target"], "source": m["Source"], "type": "bind",
                               "options": ["rbind", "ro" if ro else "rw"]})
    for target, options in (tmpfs or {}).items():
        oci_mounts.append({"destination": target, "source": "tmpfs", "type": "tmpfs",
                           "options": [o for o in options.split(",") if o]})
    ports = []
    for key, binding in (port_bindings or {}).items():
        port, proto = key.split("/")
        host_ip, host_port = binding if isinstance(binding, tuple) else ("", binding)
        ports.append({"container_port": int(port), "host_port": int(host_port), "host_ip": host_ip,
                      "protocol": proto})
    resources: dict[str, Any] = {}
    if nano_cpus:
        resources["cpu"] = {"quota": nano_cpus // 10_000, "period": 100_000}  # 1e9 nano-CPUs = period
    if mem_limit:
        resources["memory"] = {"limit": int(mem_limit)}
    if pids_limit:
        resources["pids"] = {"limit": int(pids_limit)}
    spec: dict[str, Any] = {
        "name": name, "image": image, "env": env, "labels": label_map, "hostname": hostname[:63],
        "init": True,  # as with Docker: a Python PID 1 ignores SIGTERM
        "netns": {"nsmode": "bridge"},
        "Networks": {network: {"static_ips": [ip], "aliases": aliases}},
        "hostadd": [f"{host}:{addr}" for host, addr in (extra_hosts or {}).items()],
        "mounts": oci_mounts, "volumes": volumes, "portmappings": ports,
        "devices": [{"path": dev} for dev in cdi_names(gpu_ids)],
        "read_only_filesystem": bool(read_only),
        "no_new_privileges": "no-new-privileges" in (security_opt or []),
    }
    optional = {"init_path": init_path, "entrypoint": entrypoint, "command": cmd, "work_dir": working_dir,
                "dns_server": dns,
                "dns_option": dns_opt, "user": user, "cap_drop": cap_drop, "groups": group_add,
                "resource_limits": resources}
    spec.update({k: v for k, v in optional.items() if v})
    return spec
