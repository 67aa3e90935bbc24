"""Spec validation of what a role and an init container are made of: typed options, the image,
resources, env, volumes and their sources, init containers."""

from __future__ import annotations

from .. import fields as F
from ..kube import DNS1123_LABEL, DNS1123_SUBDOMAIN
from ..kube_rules import backsteps_problem, env_name_problem
from ..model import FRAMEWORKS, GENERIC, InitContainer, Resources, Volume
from ..reader import Reader, type_name
from . import pod
from .field_names import INIT_FIELDS, RESERVED_ENV_PREFIX, RESOURCE_FIELDS, VOLUME_FIELDS, VOLUME_SOURCES


class ContainerRules:
    """The containers' fields, mixed into the job's validator (job.py) through RoleRules."""

    r: Reader

    # --- fields ----------------------------------------------------------------------
    def opt_string(self, body: dict, key: str, path: tuple) -> str | None:
        return self.r.string(body[key], path + (key,)) if body.get(key) is not None else None

    def opt_image(self, body: dict, path: tuple) -> str | None:
        image = self.opt_string(body, "image", path)
        if image is not None and image != image.strip():
            # Kubernetes refuses it ("must not have leading or trailing whitespace").
            self.r.error(path + ("image",), f"{image!r} has leading or trailing whitespace", "an image reference",
                         "remove the spaces")
            return None
        return image

    def opt_list(self, body: dict, key: str, path: tuple) -> tuple[str, ...] | None:
        if body.get(key) is None:
            return None
        example = "[python, train.py]" if key == "command" else '[--epochs, "5"]'
        return self.r.string_list(body[key], path + (key,), example=example)

    def opt_path(self, body: dict, key: str, path: tuple) -> str | None:
        value = self.opt_string(body, key, path)
        if value is not None and not value.startswith("/"):
            self.r.error(path + (key,), f"{value!r} is not an absolute path", "a path starting with /")
            return None
        return value

    def opt_choice(self, body: dict, key: str, path: tuple, choices) -> str | None:
        return self.r.choice(body[key], path + (key,), choices) if body.get(key) is not None else None

    def opt_int(self, body: dict, key: str, path: tuple, low: int | None, high: int | None) -> int | None:
        return self.r.integer(body[key], path + (key,), low, high) if body.get(key) is not None else None

    def quantity(self, value, path: tuple, example: str) -> str | None:
        return self.r.quantity(value, path, example)

    def resources(self, value, path: tuple, accelerator: str = "nvidia.com/gpu") -> Resources:
        body = self.r.mapping(value, path, RESOURCE_FIELDS) or {}
        cpu = self.quantity(body["cpu"], path + ("cpu",), '"500m" or "4"') if body.get("cpu") is not None else None
        memory = self.quantity(body["memory"], path + ("memory",), "8Gi") if body.get("memory") is not None else None
        shm = self.quantity(body["shm"], path + ("shm",), "2Gi") if body.get("shm") is not None else None
        gpu_bounds = F.MAPPINGS["resources"].bounds("gpu")
        gpu = self.r.integer(body["gpu"], path + ("gpu",), *gpu_bounds) if body.get("gpu") is not None else 0
        requests, limits = pod.resource_maps(self, body, path, cpu, memory, gpu or 0, (accelerator,))
        return Resources(cpu=cpu, memory=memory, gpu=gpu or 0, shm=shm, requests=requests, limits=limits)

    def env(self, value, path: tuple) -> tuple[tuple[str, object], ...]:
        r = self.r
        if value is None:
            return ()
        if isinstance(value, list):
            r.error(path, "is a list", "a mapping of NAME: value", "write env as a map, e.g. env: {LOG_LEVEL: info}")
            return ()
        mapping = r.mapping(value, path, tuple(value) if isinstance(value, dict) else (), what="NAME: value")
        if mapping is None:
            return ()
        out = []
        for name, item in mapping.items():
            item_path = path + (name,)
            problem = env_name_problem(name, r.kube_version)
            if problem:
                relaxed = env_name_problem(name, (1, 32)) is None
                r.error(item_path, f"{name!r} is not a valid environment variable name", problem,
                        "Kubernetes 1.32 and later accept it (RelaxedEnvironmentVariableValidation): "
                        "--kube-version 1.32" if relaxed else "", at_key=True)
                continue
            if name.startswith(RESERVED_ENV_PREFIX):
                r.error(item_path, f"{name!r} is set by trainspec", "a name not starting with TRAINSPEC_", at_key=True)
                continue
            if isinstance(item, dict):
                ref = pod.env_ref(r, item, item_path)
                if ref is not None:
                    out.append((name, ref))
                continue
            text = r.string(item, item_path, non_empty=False)
            if text is not None:
                out.append((name, text))
        return tuple(out)

    def volumes(self, value, path: tuple) -> tuple[Volume, ...]:
        r = self.r
        if value is None:
            return ()
        if not isinstance(value, list):
            r.error(path, f"is {type_name(value)}", "a list of volumes")
            return ()
        out: list[Volume] = []
        names: set[str] = set()
        mounts: set[str] = set()
        for i, item in enumerate(value):
            vp = path + (i,)
            required = F.MAPPINGS["volume"].required
            body = r.mapping(item, vp, VOLUME_FIELDS, required=required)
            if body is None or any(body.get(k) is None for k in required):
                continue
            name = r.string(body["name"], vp + ("name",))
            if name is not None and (len(name) > 63 or not DNS1123_LABEL.match(name)):
                r.error(vp + ("name",), f"{name!r} is not a valid volume name", "a DNS-1123 label")
                name = None
            if name in names:
                r.error(vp + ("name",), f"volume name {name!r} is used twice", "unique volume names")
            mount = r.string(body["mountPath"], vp + ("mountPath",))
            if mount is not None and not mount.startswith("/"):
                r.error(vp + ("mountPath",), f"{mount!r} is not an absolute path", "a path starting with /")
                mount = None
            if mount in mounts:
                r.error(vp + ("mountPath",), f"mount path {mount!r} is used twice", "unique mount paths")
            read_only = r.boolean(body["readOnly"], vp + ("readOnly",)) if body.get("readOnly") is not None else False
            source = self.volume_source(body["source"], vp + ("source",))
            if name and mount and source and read_only is not None:
                names.add(name)
                mounts.add(mount)
                kind, src, medium, size = source
                out.append(Volume(name, mount, read_only, kind, src, medium, size))
        return tuple(out)

    def volume_source(self, value, path: tuple):
        r = self.r
        body = r.mapping(value, path, VOLUME_SOURCES)
        if body is None:
            return None
        if len(body) != 1:
            r.error(path, f"has {len(body)} sources", "exactly one of " + ", ".join(VOLUME_SOURCES))
            return None
        kind, spec = next(iter(body.items()))
        kp = path + (kind,)
        if kind == "emptyDir":
            opts = r.mapping(spec, kp, F.MAPPINGS["emptyDir"].names) or {}
            medium = opts.get("medium") or ""
            if medium not in F.MAPPINGS["emptyDir"].enum("medium"):
                r.error(kp + ("medium",), f"{medium!r} is not allowed", '"" or Memory')
                return None
            size = self.quantity(opts["sizeLimit"], kp + ("sizeLimit",), "1Gi") if opts.get("sizeLimit") else None
            return kind, "", medium, size
        text = r.string(spec, kp)
        if text is None:
            return None
        if kind == "hostPath":
            if not text.startswith("/"):
                r.error(kp, f"{text!r} is not an absolute path", "a path starting with /")
                return None
            if backsteps_problem(text):
                r.error(kp, f"{text!r} {backsteps_problem(text)}", "a path without '..' elements",
                        "write the path it leads to")
                return None
        elif not DNS1123_SUBDOMAIN.match(text) or len(text) > 253:
            r.error(kp, f"{text!r} is not a valid {kind} name", "a DNS-1123 subdomain (lower-case, digits, '-', '.')")
            return None
        return kind, text, "", None

    def init_containers(self, value, path: tuple) -> tuple[InitContainer, ...]:
        r = self.r
        if value is None:
            return ()
        if not isinstance(value, list):
            r.error(path, f"is {type_name(value)}", "a list of containers")
            return ()
        out = []
        seen = set()
        for i, item in enumerate(value):
            ip = path + (i,)
            body = r.mapping(item, ip, INIT_FIELDS, required=F.MAPPINGS["initContainer"].required)
            if body is None or body.get("name") is None:
                continue
            name = r.string(body["name"], ip + ("name",))
            if name is None:
                continue
            if len(name) > 63 or not DNS1123_LABEL.match(name):
                r.error(ip + ("name",), f"{name!r} is not a valid container name", "a DNS-1123 label")
                continue
            if name in seen or (name in FRAMEWORKS and name != GENERIC):
                r.error(ip + ("name",), f"container name {name!r} is taken", "a unique name")
                continue
            seen.add(name)
            out.append(InitContainer(
                name=name, image=self.opt_image(body, ip), command=self.opt_list(body, "command", ip),
                args=self.opt_list(body, "args", ip), working_dir=self.opt_path(body, "workingDir", ip),
                env=self.env(body.get("env"), ip + ("env",)),
                resources=self.resources(body.get("resources"), ip + ("resources",)),
                restart_policy=self.opt_choice(body, "restartPolicy", ip, ("Always",))))
        return tuple(out)
