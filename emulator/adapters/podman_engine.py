"""The Podman adapter, Docker's sibling over the shared Docker-API implementation (docker_api.py): its
Docker-compatible API socket (`podman system service`), except where Podman does things its own way:

- GPUs: Podman hands devices to containers through CDI (`--device nvidia.com/gpu=0`), not Docker's
  DeviceRequests, and its compatible API passes neither on (PODMAN-NOTES; a CDI name in
  HostConfig.Devices fails as `stat nvidia.com/gpu=0: no such file`). A container with GPUs is
  therefore created through Podman's own API (libpod's containers/create), with the CDI names.
- local images: `docker save IMG | podman load` stores IMG as localhost/IMG; a run naming IMG finds it.
- error wording: the socket and how to start it; its default ulimits (CDI and rlimit texts are
  recognised in docker_api.start_error_message, which sees only the error).
- its init: found on the host, or what to install is said before any container is made (podman_init.py);
  an init path is a field of libpod's API only, as CDI devices are.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import docker
import docker.errors

from ...compiler.errors import UsageError
from .base import ContainerSpec
from .choice import EngineChoice
from .docker_api import DockerAPIEngine, already_exists, create_error_message, name_taken, short, translated
from .podman_init import podman_init

CDI_KIND = "nvidia.com/gpu"
# Where Podman reads CDI specs (the CDI default; static then generated ones).
CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
LIBPOD_API = "v4.0.0"  # the oldest libpod API with the create fields used here; newer servers accept it


def cdi_names(gpu_ids: Sequence[str]) -> list[str]:
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


class PodmanEngine(DockerAPIEngine):
    name = "podman"
    title = "Podman"
    daemon = "the Podman service"

    def __init__(self, client: docker.DockerClient, url: str):
        super().__init__(client, url)
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

    def gpu_options(self, gpu_ids: Sequence[str]) -> dict[str, Any]:
        return {"devices": cdi_names(gpu_ids)}

    def init_problem(self) -> str | None:
        """Podman's init, or another this host has (podman_init.py); what to install when there is none.
        A remote Podman (ssh, tcp) has its own host's: its create says if one is missing."""
        if not self.url.startswith("unix://"):
            return None
        self.init_path, problem = podman_init()
        return problem or None

    @translated
    def local_image(self, image: str) -> str | None:
        for candidate in (image, *self._short_name_forms(image)):
            try:
                self._api.inspect_image(candidate)
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

    def create_container(self, spec: ContainerSpec) -> str:
        spec = replace(spec, image=self._local.get(spec.image, spec.image))
        if spec.gpu_ids or self.init_path:  # CDI devices, an init path: fields of libpod's API only
            return self.create_libpod(spec)
        return self.create_compat(spec)

    @translated
    def create_libpod(self, spec: ContainerSpec) -> str:
        """The same container as create_compat makes, through libpod's API: the one that takes CDI
        devices and an init path. The body is what `podman create` would send (specgen)."""
        body = libpod_spec(spec, self.init_path)
        api = self._api
        try:
            response = api.post(f"{api.base_url}/{LIBPOD_API}/libpod/containers/create", json=body)
            api._raise_for_status(response)
            return str(response.json()["Id"])
        except docker.errors.APIError as exc:
            text = short(exc)
            if name_taken(exc):
                raise UsageError(already_exists(spec.name)) from None
            if "CDI" in text:
                raise UsageError(f"cannot create container {spec.name}: Podman cannot resolve its GPUs "
                                 f"{', '.join(cdi_names(spec.gpu_ids))} ({text}); `nvidia-ctk cdi list` shows the "
                                 "names its CDI spec defines: pass --gpus with those ids, regenerate the spec "
                                 "(`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`), or run with "
                                 "--cpu-only") from None
            raise UsageError(create_error_message(spec.name, exc)) from None


def libpod_spec(spec: ContainerSpec, init_path: str | None = None) -> dict[str, Any]:
    """Podman's specgen for one container: the ContainerSpec in libpod's words (create_compat's, in Docker's)."""
    unknown = [o for o in spec.security_opt if o != "no-new-privileges"]
    if unknown:  # lossless or loud: an option this translation does not carry is refused, never dropped
        raise UsageError(f"{spec.name}: security option {unknown[0]!r} cannot be passed to Podman with GPUs "
                         "(its own API); run with --cpu-only, or without the option")
    oci_mounts: list[dict[str, Any]] = []
    volumes: list[dict[str, Any]] = []
    for m in spec.mounts:
        mode = "ro" if m.read_only else "rw"
        if m.type == "volume":
            volumes.append({"Name": m.source, "Dest": m.target, "Options": [mode]})
        else:
            oci_mounts.append({"destination": m.target, "source": m.source, "type": "bind",
                               "options": ["rbind", mode]})
    for target, options in spec.tmpfs.items():
        oci_mounts.append({"destination": target, "source": "tmpfs", "type": "tmpfs",
                           "options": [o for o in options.split(",") if o]})
    ports = []
    for key, binding in spec.ports.items():
        port, proto = key.split("/")
        host_ip, host_port = binding if isinstance(binding, tuple) else ("", binding)
        ports.append({"container_port": int(port), "host_port": int(host_port), "host_ip": host_ip,
                      "protocol": proto})
    resources: dict[str, Any] = {}
    if spec.nano_cpus:
        resources["cpu"] = {"quota": spec.nano_cpus // 10_000, "period": 100_000}  # 1e9 nano-CPUs = period
    if spec.memory:
        resources["memory"] = {"limit": int(spec.memory)}
    if spec.pids:
        resources["pids"] = {"limit": int(spec.pids)}
    body: dict[str, Any] = {
        "name": spec.name, "image": spec.image, "env": dict(spec.env), "labels": dict(spec.labels),
        "hostname": spec.hostname[:63],
        "init": spec.init,
        "netns": {"nsmode": "bridge"},
        "Networks": {spec.network: {"static_ips": [spec.ip], "aliases": list(spec.aliases)}},
        "hostadd": [f"{host}:{addr}" for host, addr in spec.extra_hosts.items()],
        "mounts": oci_mounts, "volumes": volumes, "portmappings": ports,
        "devices": [{"path": dev} for dev in cdi_names(spec.gpu_ids)],
        "read_only_filesystem": bool(spec.read_only),
        "no_new_privileges": "no-new-privileges" in spec.security_opt,
    }
    optional = {"init_path": init_path, "entrypoint": _list(spec.entrypoint), "command": _list(spec.command),
                "work_dir": spec.working_dir, "dns_server": _list(spec.dns), "dns_option": _list(spec.dns_options),
                "user": spec.user, "cap_drop": list(spec.cap_drop), "groups": list(spec.group_add),
                "resource_limits": resources}
    body.update({k: v for k, v in optional.items() if v})
    return body


def _list(args: Sequence[str] | None) -> list[str] | None:
    return list(args) if args is not None else None
