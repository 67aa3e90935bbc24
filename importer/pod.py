"""One pod template (Kubeflow replica spec or Volcano task) -> one spec role, as plain data.

Every key of the template is either mapped to a spec field or handed to
`Context.unmap` as a JSON-patch op against the compiled template, so nothing of
the manifest is silently lost.  `base` is the JSON pointer of the compiled
template (`/spec/tfReplicaSpecs/Worker/template`, `/spec/tasks/1/template`);
the training container is always `containers/0` in the compiled output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .context import Context

# Env the operators and Volcano plugins inject: not the user's, the compiled output gets it again.
INJECTED_ENV = {
    "tensorflow": ("TF_CONFIG",),
    "pytorch": ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "PYTHONUNBUFFERED", "PET_*"),
    "mxnet": ("DMLC_*", "MX_CONFIG"),
    "mpi": ("OMPI_MCA_*", "I_MPI_HYDRA_HOST_FILE", "I_MPI_PERHOST", "HYDRA_HOST_FILE", "K_MPI_JOB_ROLE", "MPI_HOST"),
    "xgboost": ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "PYTHONUNBUFFERED", "WORKER_PORT",
                "WORKER_ADDRS"),
    "paddle": ("PYTHONUNBUFFERED", "PADDLE_JOB_ID", "PADDLE_NNODES", "PADDLE_MASTER", "PADDLE_SERVER_NUM",
               "PADDLE_TRAINER_NUM", "POD_IP_DUMMY"),
    "jax": ("PYTHONUNBUFFERED", "COORDINATOR_PORT", "COORDINATOR_ADDRESS", "NUM_PROCESSES", "PROCESS_ID"),
    "generic": (),  # nothing is injected but what every replica gets (ALWAYS_INJECTED)
}
ALWAYS_INJECTED = ("TRAINSPEC_*", "VC_*", "VK_TASK_INDEX")
CONTAINER_NAME = {fw: fw for fw in INJECTED_ENV} | {"generic": "main"}
PORT_NAMES = {"tensorflow": "tfjob-port", "pytorch": "pytorchjob-port", "mxnet": "mxjob-port",
              "mpi": "mpijob-port", "xgboost": "xgboostjob-port", "paddle": "master", "jax": "jaxjob-port",
              "generic": "trainspec"}
# Label and annotation prefixes trainspec writes itself and a spec may not set (compiler/validate/pod.py).
RESERVED_PREFIXES = ("app.kubernetes.io/", "trainspec.dev/")
GPU_SUFFIXES = ("/gpu", "/npu", "/mlu", "/dcu")
SPEC_POD_FIELDS = {  # pod template spec key -> spec field (v1.1)
    "serviceAccountName": "serviceAccountName", "nodeSelector": "nodeSelector", "tolerations": "tolerations",
    "affinity": "affinity", "securityContext": "podSecurityContext",
}
SIMPLE_CONTAINER_FIELDS = {"imagePullPolicy": "imagePullPolicy", "securityContext": "securityContext"}
PROBE_KEYS = {"livenessProbe": "liveness", "readinessProbe": "readiness", "startupProbe": "startup"}
PROBE_NUMBERS = ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "successThreshold", "failureThreshold")
_KUBELET_REF = re.compile(r"\$\(|\$\$")


def pointer(*parts) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def is_injected(name: str, framework: str) -> bool:
    for pattern in INJECTED_ENV.get(framework, ()) + ALWAYS_INJECTED:
        if name == pattern or (pattern.endswith("*") and name.startswith(pattern[:-1])):
            return True
    return False


def spec_text(text: str) -> str:
    """A manifest string as spec text: `{{`, `{%` and `{#` would be templates, so write them literally."""
    if not any(m in text for m in ("{{", "{%", "{#")):
        return text
    out, i = [], 0
    while i < len(text):
        pair = text[i:i + 2]
        if pair in ("{{", "{%", "{#"):
            out.append("{{ '" + pair + "' }}")
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


@dataclass
class RoleDraft:
    """A role as spec data, plus what only the job level can hold."""

    body: dict
    pod_scheduler: str | None = None
    image_pull_secrets: list | None = None
    accelerator: str | None = None
    port: int | None = None
    volumes: list | None = None  # spec volume entries (job-level candidates)
    taken: dict = field(default_factory=dict)  # pod field -> (value, manifest path, pointer), see PodImporter.take


class PodImporter:
    def __init__(self, ctx: Context, framework: str, role: str, accelerator: str | None):
        self.ctx = ctx
        self.framework = framework
        self.role = role
        self.accelerator = accelerator
        self.dropped_env: list[str] = []
        self.main = 0
        self.generated_volumes = False  # the target mounts a volume of its own (Volcano's MPI hostfile)
        self.skip_volumes: tuple[str, ...] = ()  # volumes the target writes itself
        self.take: tuple[str, ...] = ()  # pod fields the source module maps itself (draft.taken)
        # pod fields the target writes itself with these values (the k8s output's subdomain, a replica's hostname)
        self.target_sets: dict[str, tuple] = {}

    # --- template ------------------------------------------------------------------------
    def template(self, tpl, path: tuple, base: str) -> RoleDraft:
        ctx = self.ctx
        draft = RoleDraft(body={})
        if not isinstance(tpl, dict):
            raise ctx.fail(path, "is not a pod template", "a mapping with metadata and spec")
        for key, value in tpl.items():
            if key == "metadata":
                self.metadata(value, path + (key,), base + "/metadata", draft)
            elif key != "spec":
                ctx.unmap(path + (key,), "add", f"{base}/{key}", value)
        spec = tpl.get("spec")
        if not isinstance(spec, dict):
            raise ctx.fail(path + ("spec",), "has no pod spec", "template.spec with containers")
        self.pod_spec(spec, path + ("spec",), base + "/spec", draft)
        return draft

    def metadata(self, meta, path: tuple, base: str, draft: RoleDraft) -> None:
        if not isinstance(meta, dict):
            return
        for key, value in meta.items():
            if key in ("labels", "annotations") and isinstance(value, dict):
                kept = {}
                for k, v in value.items():
                    if not k.startswith(RESERVED_PREFIXES):
                        kept[k] = str(v)  # the operators' and Volcano's keys too: carried as written
                    elif k != "trainspec.dev/index" and str(v) != self.own_label(k):
                        self.ctx.unmap(path + (key, k), "add", f"{base}/{key}/{pointer(k)[1:]}", str(v),
                                       f"{k} is a key trainspec sets itself")
                if kept:
                    draft.body["podLabels" if key == "labels" else "podAnnotations"] = kept
            elif key != "name":
                self.ctx.unmap(path + (key,), "add", f"{base}/{key}", value)

    def own_label(self, key: str) -> str | None:
        """The value trainspec writes for one of its own pod-template keys (None: one it does not write alike)."""
        job = self.ctx.job_name or str((self.ctx.doc.data.get("metadata") or {}).get("name"))
        return {"app.kubernetes.io/name": job, "app.kubernetes.io/instance": job, "app.kubernetes.io/part-of": job,
                "app.kubernetes.io/managed-by": "trainspec", "app.kubernetes.io/component": self.role,
                "trainspec.dev/job": job, "trainspec.dev/role": self.role}.get(key)

    def pod_spec(self, spec: dict, path: tuple, base: str, draft: RoleDraft) -> None:
        ctx = self.ctx
        containers = spec.get("containers")
        if not isinstance(containers, list) or not containers or not all(isinstance(c, dict) for c in containers):
            raise ctx.fail(path + ("containers",), "has no containers", "at least one container")
        main = next((i for i, c in enumerate(containers) if c.get("name") == CONTAINER_NAME[self.framework]), 0)
        name = containers[main].get("name")
        if name != CONTAINER_NAME[self.framework] and isinstance(name, str):
            # Commands and tools may name the container (`kubectl logs -c`, JAXJob's port): keep it.
            if ctx.target != "kubeflow" or self.framework == "mpi":
                draft.body["containerName"] = name
                ctx.uses("containerName")
            else:  # the Kubeflow webhooks want their default name: the kubeflow target refuses another
                ctx.unmap(path + ("containers", main, "name"), "replace", f"{base}/containers/0/name", name,
                          f"the training container is named {name!r}, not {CONTAINER_NAME[self.framework]!r} "
                          "(containerName is refused on the kubeflow target)")
        self.main = main
        mounts = self.container(containers[main], path + ("containers", main), f"{base}/containers/0", draft)
        for i, other in enumerate(containers):
            if i != main:
                ctx.unmap(path + ("containers", i), "add", f"{base}/containers/-", other, "a second container")
        volumes = spec.get("volumes") or []
        self.volumes(volumes, mounts, path, base, draft)
        for key, value in spec.items():
            kp = path + (key,)
            if key in ("containers", "volumes", "restartPolicy"):
                continue  # restartPolicy: the operators set the pod's from the replica's (see the source module)
            if key in self.take:
                draft.taken[key] = (value, kp, f"{base}/{key}")
                continue
            if value in self.target_sets.get(key, ()):
                continue
            if key == "initContainers":
                self.init_containers(value, kp, f"{base}/{key}", draft, mounts)
            elif key in SPEC_POD_FIELDS and value not in (None, {}, []):
                draft.body[SPEC_POD_FIELDS[key]] = value
                ctx.uses(SPEC_POD_FIELDS[key])
            elif key == "imagePullSecrets" and isinstance(value, list) and all(
                    isinstance(s, dict) and set(s) == {"name"} for s in value):
                draft.image_pull_secrets = [s["name"] for s in value]
            elif key == "schedulerName" and isinstance(value, str):
                draft.pod_scheduler = value
            elif key == "priorityClassName" and isinstance(value, str):
                draft.body["priorityClassName"] = value
            else:
                ctx.unmap(kp, "add", f"{base}/{key}", value)
        shm = "shm" in draft.body.get("resources", {})
        if not draft.volumes and not shm and not self.generated_volumes:
            ctx.absent |= {f"{base}/volumes", f"{base}/containers/0/volumeMounts"}
        if "initContainers" not in draft.body:
            ctx.absent.add(f"{base}/initContainers")
        if "lifecycle" not in draft.body:
            ctx.absent.add(f"{base}/containers/0/lifecycle")
        if not draft.body.get("resources"):
            ctx.absent.add(f"{base}/containers/0/resources")

    # --- the training container -------------------------------------------------------------
    def container(self, c: dict, path: tuple, base: str, draft: RoleDraft) -> list[dict]:
        ctx, body = self.ctx, draft.body
        mounts: list[dict] = []
        for key, value in c.items():
            kp = path + (key,)
            if key == "name":
                continue
            if key == "image" and isinstance(value, str):
                body["image"] = value
            elif key in ("command", "args") and isinstance(value, list) and all(isinstance(s, str) for s in value):
                if any(_KUBELET_REF.search(s) for s in value):
                    ctx.unmap(kp, "replace", f"{base}/{key}", value, "uses $(VAR), which the kubelet expands "
                              "and spec text cannot express")
                    body[key] = [spec_text(s) for s in value]
                    ctx.comment(("spec", "roles", self.role, key), "a patch restores the $(VAR) references")
                else:
                    body[key] = [spec_text(s) for s in value]
            elif key == "workingDir" and isinstance(value, str):
                body["workingDir"] = value
            elif key == "env" and isinstance(value, list):
                self.env(value, kp, base, body)
            elif key == "resources" and isinstance(value, dict):
                self.resources(value, kp, base, draft)
            elif key == "ports" and isinstance(value, list):
                self.ports(value, kp, base, draft)
            elif key == "volumeMounts" and isinstance(value, list):
                mounts = [m for m in value if isinstance(m, dict)]
            elif key in SIMPLE_CONTAINER_FIELDS and value not in (None, {}):
                body[SIMPLE_CONTAINER_FIELDS[key]] = value
                ctx.uses(SIMPLE_CONTAINER_FIELDS[key])
            elif key == "lifecycle" and isinstance(value, dict):
                self.lifecycle(value, kp, base, body)
            elif key in PROBE_KEYS and isinstance(value, dict) and self.probe_ok(value):
                body.setdefault("probes", {})[PROBE_KEYS[key]] = self.probe(value)
            else:
                ctx.unmap(kp, "add", f"{base}/{key}", value)
        self.dropped_env = [n for n in self.dropped_env if not n.startswith("TRAINSPEC_")]  # every replica's
        if self.dropped_env:
            ctx.comment(("spec", "roles", self.role), "env set by the operator not imported: "
                        + ", ".join(self.dropped_env))
        return mounts

    def env(self, items: list, path: tuple, base: str, body: dict) -> None:
        out: dict = {}
        for i, item in enumerate(items):
            ip = path + (i,)
            name = item.get("name") if isinstance(item, dict) else None
            if not isinstance(name, str):
                self.ctx.unmap(ip, "add", f"{base}/env/-", item)
                continue
            if is_injected(name, self.framework):
                self.dropped_env.append(name)
                continue
            value = self.env_value(item)
            if value is None:
                self.ctx.unmap(ip, "add", f"{base}/env/-", item,
                               "uses $(VAR) or a reference form spec env cannot express")
                continue
            out[name] = value
        if out:
            body["env"] = out

    def env_value(self, item: dict):
        if set(item) <= {"name", "value"}:
            text = str(item.get("value", ""))
            return None if _KUBELET_REF.search(text) else spec_text(text)
        source = item.get("valueFrom")
        if set(item) != {"name", "valueFrom"} or not isinstance(source, dict) or len(source) != 1:
            return None
        kind, ref = next(iter(source.items()))
        if kind in ("secretKeyRef", "configMapKeyRef") and isinstance(ref, dict) and set(ref) == {"name", "key"}:
            return {kind: dict(ref)}
        if kind in ("fieldRef", "resourceFieldRef") and isinstance(ref, dict):
            self.ctx.uses("env " + kind)
            return {kind: dict(ref)}
        return None

    def resources(self, res: dict, path: tuple, base: str, draft: RoleDraft) -> None:
        requests = {k: v for k, v in (res.get("requests") or {}).items()}
        limits = {k: v for k, v in (res.get("limits") or {}).items()}
        for key in res:
            if key not in ("requests", "limits"):
                self.ctx.unmap(path + (key,), "add", f"{base}/resources/{key}", res[key])
        out: dict = {}
        for name in sorted(set(requests) | set(limits), key=lambda n: (n not in ("cpu", "memory"), n)):
            req, lim = requests.get(name), limits.get(name)
            same = lim is not None and (req is None or str(req) == str(lim))
            if same and name.endswith(GPU_SUFFIXES) and str(lim).isdigit() and name == (self.accelerator or name):
                self.accelerator = draft.accelerator = name
                out["gpu"] = int(str(lim))
            elif name in ("cpu", "memory") and same:
                out[name] = str(lim)
            else:
                if req is not None:
                    out.setdefault("requests", {})[name] = str(req)
                if lim is not None:
                    out.setdefault("limits", {})[name] = str(lim)
                self.ctx.uses("resources.requests/limits")
        if out:
            order = ("cpu", "memory", "gpu", "shm", "requests", "limits")
            draft.body["resources"] = {k: out[k] for k in order if k in out}

    def ports(self, ports: list, path: tuple, base: str, draft: RoleDraft) -> None:
        own = [p for p in ports if isinstance(p, dict) and p.get("name") == PORT_NAMES["generic"]]
        if self.framework == "generic" and ports and not (len(ports) == 1 and own):  # the list as written
            self.ctx.unmap(path, "add", f"{base}/ports", ports, "ports of a generic job's container")
            return
        for i, port in enumerate(ports):
            if isinstance(port, dict) and port.get("name") == PORT_NAMES[self.framework] and \
                    isinstance(port.get("containerPort"), int) and port.get("protocol", "TCP") == "TCP" and \
                    set(port) <= {"name", "containerPort", "protocol"}:
                draft.port = port["containerPort"]
            else:
                self.ctx.unmap(path + (i,), "add", f"{base}/ports/-", port, "a port other than the framework's")

    def lifecycle(self, value: dict, path: tuple, base: str, body: dict) -> None:
        hooks = {}
        for key, handler in value.items():
            mapped = self.handler(handler, ("exec", "httpGet")) if key in ("postStart", "preStop") else None
            if mapped is None:
                self.ctx.unmap(path + (key,), "add", f"{base}/lifecycle/{key}", handler)
            else:
                hooks[key] = mapped
        if hooks:
            body["lifecycle"] = hooks

    def handler(self, value, kinds=("exec", "httpGet", "tcpSocket"), extra=()):
        if not isinstance(value, dict) or not set(value) <= set(kinds) | set(extra):
            return None
        present = [k for k in kinds if k in value]
        if len(present) != 1:
            return None
        kind = present[0]
        body = value[kind]
        if kind == "exec":
            if isinstance(body, dict) and set(body) == {"command"} and isinstance(body["command"], list):
                return {"exec": list(body["command"])}
            return None
        allowed = {"path", "port", "scheme", "host"} if kind == "httpGet" else {"port", "host"}
        if isinstance(body, dict) and set(body) <= allowed and "port" in body:
            return {kind: dict(body)}
        return None

    def probe_ok(self, value: dict) -> bool:
        return self.handler(value, extra=PROBE_NUMBERS) is not None

    def probe(self, value: dict) -> dict:
        out = self.handler(value, extra=PROBE_NUMBERS) or {}
        out.update({k: value[k] for k in PROBE_NUMBERS if k in value})
        return out

    # --- volumes ---------------------------------------------------------------------------
    def volumes(self, volumes: list, mounts: list[dict], path: tuple, base: str, draft: RoleDraft) -> None:
        by_name = {v.get("name"): (i, v) for i, v in enumerate(volumes) if isinstance(v, dict)
                   and v.get("name") not in self.skip_volumes}
        mounts = [m for m in mounts if m.get("name") not in self.skip_volumes]
        used: set = set()
        out = []
        for j, mount in enumerate(mounts):
            name = mount.get("name")
            entry = by_name.get(name)
            mp = path + ("containers", self.main, "volumeMounts", j)
            source = self.volume_source(entry[1]) if entry else None
            if entry is None or name in used or not set(mount) <= {"name", "mountPath", "readOnly"} or \
                    "mountPath" not in mount or source is None:
                self.ctx.unmap(mp, "add", f"{base}/containers/0/volumeMounts/-", mount,
                               "a mount spec volumes cannot express")
                continue
            used.add(name)
            kind, src = source
            if name == "dshm" and mount.get("mountPath") == "/dev/shm" and kind == "emptyDir" and \
                    src.get("medium") == "Memory" and src.get("sizeLimit") and not mount.get("readOnly"):
                draft.body.setdefault("resources", {})["shm"] = str(src["sizeLimit"])
                continue
            vol = {"name": name, "mountPath": mount["mountPath"]}
            read_only = bool(mount.get("readOnly")) or (kind == "persistentVolumeClaim" and src.get("readOnly"))
            if kind == "persistentVolumeClaim" and src.get("readOnly") and not mount.get("readOnly"):
                self.ctx.comment(("spec", "roles", self.role), f"volume {name}: the claim is read-only, so is the "
                                 "mount")
            if read_only:
                vol["readOnly"] = True
            vol["source"] = {kind: src if kind == "emptyDir" else
                             src.get("claimName") or src.get("path") or src.get("name") or src.get("secretName")}
            out.append(vol)
        for name, (i, vol) in by_name.items():
            if name not in used:
                self.ctx.unmap(path + ("volumes", i), "add", f"{base}/volumes/-", vol,
                               "a volume the training container does not mount, or in a form spec volumes lack")
        draft.volumes = out

    def volume_source(self, vol: dict):
        kinds = [k for k in vol if k != "name"]
        if len(kinds) != 1:
            return None
        kind, src = kinds[0], vol[kinds[0]]
        if not isinstance(src, dict):
            return None
        allowed = {"persistentVolumeClaim": {"claimName", "readOnly"}, "hostPath": {"path"},
                   "emptyDir": {"medium", "sizeLimit"}, "configMap": {"name"}, "secret": {"secretName"}}.get(kind)
        if allowed is None or not set(src) <= allowed:
            return None
        if kind == "hostPath" and "path" not in src:
            return None
        return kind, dict(src)

    def init_containers(self, items, path: tuple, base: str, draft: RoleDraft, mounts: list[dict]) -> None:
        out = []
        plain = {"name", "image", "command", "args", "workingDir", "env", "resources", "volumeMounts",
                 "restartPolicy"}
        for i, item in enumerate(items if isinstance(items, list) else []):
            ip = path + (i,)
            ok = isinstance(item, dict) and set(item) <= plain and item.get("volumeMounts", mounts) == mounts and \
                item.get("restartPolicy", "Always") == "Always"
            res = item.get("resources") if ok else None
            if ok and res is not None:
                req, lim = res.get("requests") or {}, res.get("limits") or {}
                ok = set(res) <= {"requests", "limits"} and set(req) | set(lim) <= {"cpu", "memory"} and \
                    all(str(req.get(k)) == str(lim.get(k)) for k in req if k in lim) and \
                    set(req) <= set(lim)
            sub = PodImporter(self.ctx, self.framework, self.role, self.accelerator)
            env_body: dict = {}
            if ok and item.get("env") is not None:
                ok = all(isinstance(e, dict) and sub.env_value(e) is not None for e in item["env"])
                if ok:
                    env_body = {e["name"]: sub.env_value(e) for e in item["env"]}
            if not ok or any(_KUBELET_REF.search(s) for k in ("command", "args") for s in item.get(k) or []):
                self.ctx.unmap(ip, "add", f"{base}/-", item, "an init container spec fields cannot express")
                continue
            init = {k: item[k] for k in ("name", "image", "command", "args", "workingDir") if k in item}
            if env_body:
                init["env"] = env_body
            if item.get("resources", {}).get("limits"):
                init["resources"] = {k: str(v) for k, v in item["resources"]["limits"].items()}
            if item.get("restartPolicy") == "Always":
                init["restartPolicy"] = "Always"
                self.ctx.uses("initContainers[].restartPolicy")
            out.append(init)
        if out:
            draft.body["initContainers"] = out
