"""A compiled `k8s.yaml` read into the run model.

`from_k8s(docs)` reads the `k8s` target's objects (or any hand-written set of
Jobs/Deployments/Services/ConfigMaps/Secrets of the same shape) into the run
model's dataclasses. Everything that can be wrong with the input is found here,
before Docker is touched, and reported as a UsageError naming the object and field.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

from ...compiler import runpolicy
from ...compiler.errors import UsageError
from ...compiler.kube import expand_references, parse_quantity
from ..host.paths import safe_name, safe_subpath
from ..model.job import (
    Container,
    EnvSource,
    FailureRule,
    FileEntry,
    JobModel,
    Mount,
    Probe,
    Replica,
    listing_order,
)
from ..model.policy import fallback_rule
from ..model.ports import Port, k8s_port
from ..model.security import k8s_security
from .controllers import OWNER
from .controllers.indexed_job import expand as expand_indexed
from .pod_rules import refuse_api_rejects
from .positions import field_error
from .secrets import env_text

FRAMEWORK_CONTAINERS = ("tensorflow", "pytorch", "mxnet", "mpi")
# Limit keys that are not accelerators (anything else is: the resource name
# of accelerators is configurable in the spec).
PLAIN_RESOURCES = ("cpu", "memory", "ephemeral-storage")
ANNOTATION = "trainspec.dev/"


def split_jobs(docs: list[dict], source: str) -> dict[str, list[dict]]:
    """Group objects by job (label trainspec.dev/job, else the topology CM)."""
    jobs: dict[str, list[dict]] = {}
    shared: list[dict] = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        meta = doc.get("metadata") or {}
        job = (meta.get("labels") or {}).get("trainspec.dev/job")
        if job is None and doc.get("kind") in ("Job", "Deployment", "StatefulSet"):
            tmpl = ((doc.get("spec") or {}).get("template") or {}).get("metadata") or {}
            job = (tmpl.get("labels") or {}).get("trainspec.dev/job")
        if job is None:
            shared.append(doc)
        else:
            jobs.setdefault(job, []).append(doc)
    if not jobs:
        raise UsageError(f"{source}: no trainspec workloads found (Jobs or Deployments labelled "
                         "trainspec.dev/job); is this the output of `trainspec compile --target k8s`?")
    for name, objs in jobs.items():
        jobs[name] = objs + shared
    return jobs


def from_k8s(docs: list[dict], source: str = "<input>", state_dir: str = ".trainspec",
             job: str | None = None, secrets: dict[str, dict[str, bytes]] | None = None,
             configmaps: dict[str, dict[str, bytes]] | None = None) -> JobModel:
    groups = split_jobs(docs, source)
    if job is None:
        if len(groups) > 1:
            raise UsageError(f"{source} holds {len(groups)} jobs ({', '.join(sorted(groups))}); "
                             "choose one with --job NAME")
        job = next(iter(groups))
    elif job not in groups:
        raise UsageError(f"{source}: no job named {job!r} (found: {', '.join(sorted(groups))})")
    return _Reader(groups[job], source, job, state_dir, secrets or {}, configmaps or {}).read()


class _Reader:
    def __init__(self, docs: list[dict], source: str, job: str, state_dir: str,
                 extra_secrets: dict[str, dict[str, bytes]], extra_configmaps: dict[str, dict[str, bytes]]):
        self.docs = docs
        self.source = source
        self.job = job
        self.state_dir = state_dir
        self.configmaps: dict[str, dict[str, bytes]] = dict(extra_configmaps)
        self.secrets: dict[str, dict[str, bytes]] = dict(extra_secrets)
        self.secret_missing: dict[str, str] = {}
        self.configmap_missing: dict[str, str] = {}
        self.topology: dict | None = None
        self.namespace = "default"

    def fail(self, node: Any, path: tuple, message: str, *, expected: str = "", hint: str = "",
             label: str = "") -> Exception:
        """At the line and column of `path` under the input value `node` (positions.py: a controller's pods
        are copies of the manifest's templates and point there); `label` names the object when the value
        has no position (a chart's rendering, what a controller made itself)."""
        return field_error(self.source, node, path, message, expected, hint, label)

    def data(self, doc: dict, field: str, name: str) -> dict:
        value = doc.get(field) or {}
        if not isinstance(value, dict):
            raise self.fail(doc, (field,), f"is {type(value).__name__}", expected="a mapping of keys",
                            label=f"{doc.get('kind')} {name}")
        return value

    def base64(self, value: object, doc: dict, path: tuple, label: str) -> bytes:
        """A Secret's data / a ConfigMap's binaryData value: base64 or an error (the API server refuses it),
        never silently empty. The value is not quoted: it may be a secret."""
        if not isinstance(value, str):
            raise self.fail(doc, path, f"is {type(value).__name__}", expected="a base64 string", label=label)
        try:
            return base64.b64decode(value, validate=True)
        except (ValueError, TypeError):
            raise self.fail(doc, path, "not valid base64 (value not shown); the API server refuses it",
                            label=label) from None

    def read(self) -> JobModel:
        workloads: list[dict] = []
        services: list[dict] = []
        for doc in self.docs:
            kind = doc.get("kind")
            meta = doc.get("metadata") or {}
            name = meta.get("name", "?")
            if kind == "ConfigMap":
                if name in self.configmaps:
                    continue  # given on the command line: that wins
                data = {k: str(v).encode() for k, v in self.data(doc, "data", name).items()}
                for k, v in self.data(doc, "binaryData", name).items():
                    data[k] = self.base64(v, doc, ("binaryData", k), f"ConfigMap {name}")
                self.configmaps[name] = data
                if ANNOTATION + "framework" in (meta.get("annotations") or {}):
                    self.topology = doc
            elif kind == "Secret":
                if name in self.secrets:
                    continue  # given on the command line: that wins
                data = {k: self.base64(v, doc, ("data", k), f"Secret {name}")
                        for k, v in self.data(doc, "data", name).items()}
                for k, v in self.data(doc, "stringData", name).items():
                    data[k] = str(v).encode()
                self.secrets[name] = data
            elif kind in ("Job", "Deployment", "StatefulSet"):
                # an Indexed Job or a StatefulSet: one per pod
                workloads += expand_indexed(doc, self.job, self.source)
            elif kind == "Service":
                services.append(doc)
            if kind in ("Job", "Deployment", "StatefulSet", "ConfigMap") and meta.get("namespace"):
                self.namespace = meta["namespace"]
        ann = ((self.topology or {}).get("metadata") or {}).get("annotations") or {}
        framework = ann.get(ANNOTATION + "framework")
        replicas = [self.replica(w) for w in workloads]
        if not replicas:
            raise self.fail(None, (), "has no Jobs or Deployments to run", label=f"job {self.job}")
        names = [r.name for r in replicas]
        if len(set(names)) != len(names):
            twice = next(w for w in workloads if names.count(str((w.get("metadata") or {}).get("name") or "")) > 1)
            raise self.fail(twice, ("metadata", "name"), "two workloads have the same name", label=f"job {self.job}")
        self.add_service_aliases(replicas, services)
        policy = self.run_policy(ann)
        if policy is not None:
            for r in replicas:
                if r.role in policy.restart:
                    r.spec_policy = policy.restart[r.role].policy
            success = policy.success
            clean = policy.cleanup.pods or "Running"
            backoff, deadline = policy.backoff_limit, policy.deadline
        else:  # a hand-written manifest (or one compiled before the run policy existed)
            success = fallback_rule(framework, replicas, ann.get(ANNOTATION + "success-policy") or None)
            clean = ann.get(ANNOTATION + "clean-pod-policy") or "Running"
            if clean not in runpolicy.CLEAN_POD_POLICIES:
                raise self.fail(self.topology, ("metadata", "annotations", ANNOTATION + "clean-pod-policy"),
                                f"{clean!r} is not Running|All|None", label="ConfigMap")
            backoff = _opt_int(ann.get(ANNOTATION + "backoff-limit"))
            deadline = _opt_int(ann.get(ANNOTATION + "active-deadline-seconds"))
        return JobModel(
            name=self.job, namespace=self.namespace, framework=framework, success=success,
            clean_pod_policy=clean, backoff_limit=backoff,
            active_deadline=None if deadline is None else float(deadline),
            replicas=listing_order(replicas), configmaps=self.configmaps, secrets=self.secrets,
            secret_missing=self.secret_missing, configmap_missing=self.configmap_missing, source=self.source,
            # Plain Kubernetes starts every pod at once and stops none when the job is done.
            start_order=policy.start_order if policy else (), start_after={}, controller=False)

    def run_policy(self, ann: dict) -> runpolicy.RunPolicy | None:
        if runpolicy.ANNOTATION not in ann:
            return None
        try:
            return runpolicy.parse_annotation(ann[runpolicy.ANNOTATION])
        except runpolicy.RunPolicyError as exc:
            raise self.fail(self.topology, ("metadata", "annotations", runpolicy.ANNOTATION),
                            str(exc).removeprefix(f"{runpolicy.ANNOTATION}: "),
                            label=f"ConfigMap {(self.topology or {}).get('metadata', {}).get('name')}") from None

    # -- workloads -------------------------------------------------------
    def replica(self, doc: dict) -> Replica:
        kind = doc["kind"]
        meta = doc.get("metadata") or {}
        name = meta.get("name") or ""
        where = f"{kind} {name}"
        spec = doc.get("spec") or {}
        tmpl = spec.get("template") or {}
        labels = {str(k): str(v) for k, v in ((tmpl.get("metadata") or {}).get("labels") or {}).items()}
        pod = tmpl.get("spec") or {}
        role = labels.get("trainspec.dev/role") or labels.get("app.kubernetes.io/component")
        index = labels.get("trainspec.dev/index")
        if role is None or index is None:
            # A hand-written workload: fall back to <job>-<role>-<i>.
            rest = name[len(self.job) + 1:] if name.startswith(self.job + "-") else name
            r, _, i = rest.rpartition("-")
            if not r or not i.isdigit():
                raise self.fail(doc, ("metadata", "name"), "cannot tell its role and index",
                                hint="label the pod template with trainspec.dev/role and trainspec.dev/index",
                                label=where)
            role, index = r, i
        restart = pod.get("restartPolicy") or ("Always" if kind == "Deployment" else "Never")
        if kind == "Job" and restart == "Always":
            raise self.fail(pod, ("restartPolicy",), "a Job's pod cannot have restartPolicy Always", label=where)
        per_index = _opt_int(spec.get("backoffLimitPerIndex")) if kind == "Job" else None
        if per_index is not None and restart != "Never":
            raise self.fail(spec, ("backoffLimitPerIndex",), "requires the pod's restartPolicy Never "
                            "(the API server refuses it with OnFailure)", label=where)
        rules: list[FailureRule] = []
        for rule in ((spec.get("podFailurePolicy") or {}).get("rules") or []):
            codes = rule.get("onExitCodes")
            if not codes:
                continue  # onPodConditions (eviction, ...) cannot happen here
            rules.append(FailureRule(rule.get("action", "Count"), codes.get("operator", "In"),
                                     [int(v) for v in codes.get("values") or []]))
        refuse_api_rejects(self, pod, where)
        volumes = {v.get("name"): v for v in pod.get("volumes") or []}
        containers = pod.get("containers") or []
        if not containers:
            raise self.fail(pod, (), "has no containers", label=where)
        main = next((c for c in containers if c.get("name") in FRAMEWORK_CONTAINERS), containers[0])
        if len(containers) > 1:
            others = [c.get("name") for c in containers if c is not main]
            raise self.fail(pod, ("containers",), f"has more than one container ({', '.join(map(str, others))} "
                            f"besides {main.get('name')}); the emulator runs one main container per replica",
                            label=where)
        ctx = f"{where}"
        grace = float(pod.get("terminationGracePeriodSeconds", 30))
        hostname = pod.get("hostname") or name
        aliases = [name, f"{name}.{self.namespace}.svc", f"{name}.{self.namespace}.svc.cluster.local"]
        if pod.get("hostname") and pod.get("subdomain"):
            h, s = pod["hostname"], pod["subdomain"]
            aliases += [f"{h}.{s}", f"{h}.{s}.{self.namespace}.svc", f"{h}.{s}.{self.namespace}.svc.cluster.local"]
        return Replica(
            name=name, role=str(role), index=int(index), workload=kind,
            restart_policy=restart,
            # backoffLimitPerIndex makes the Job's own limit MaxInt32 unless it is set (batch/v1 defaults)
            backoff_limit=int(spec.get("backoffLimit", 6 if per_index is None else 2**31 - 1)) if kind == "Job" else 0,
            active_deadline=_opt_float(spec.get("activeDeadlineSeconds") or pod.get("activeDeadlineSeconds")),
            failure_rules=rules, hostname=hostname, aliases=_dedupe(aliases), labels=labels,
            init_containers=[self.container(c, volumes, f"{ctx} initContainer {c.get('name')}", pod)
                             for c in pod.get("initContainers") or []],
            main=self.container(main, volumes, f"{ctx} container {main.get('name')}", pod),
            grace=grace, job_owner=str((meta.get("annotations") or {}).get(OWNER) or ""),
            backoff_per_index=per_index, max_failed_indexes=_opt_int(spec.get("maxFailedIndexes")))

    def add_service_aliases(self, replicas: list[Replica], services: list[dict]) -> None:
        """A Service whose selector picks exactly one replica names it too."""
        for svc in services:
            meta = svc.get("metadata") or {}
            sel = (svc.get("spec") or {}).get("selector") or {}
            if not sel:
                continue
            picked = [r for r in replicas if all(r.labels.get(k) == str(v) for k, v in sel.items())]
            if len(picked) != 1:
                continue  # shared names would need round-robin DNS; kept out of hosts files
            n, ns = meta.get("name"), meta.get("namespace") or self.namespace
            if not isinstance(n, str):
                continue  # no name, no alias (the API server refuses such a Service)
            r = picked[0]
            r.aliases = _dedupe(r.aliases + [n, f"{n}.{ns}", f"{n}.{ns}.svc", f"{n}.{ns}.svc.cluster.local"])

    # -- containers ------------------------------------------------------
    def container(self, c: dict, volumes: dict[str, dict], where: str, pod: dict) -> Container:
        image = c.get("image")
        if not image:
            raise self.fail(c, ("image",), "has no image", label=where)
        res = c.get("resources") or {}
        limits = {**(res.get("requests") or {}), **(res.get("limits") or {})}
        cpu = memory = None
        accel: dict[str, int] = {}
        for key, value in limits.items():
            try:
                q = parse_quantity(value)
            except ValueError:
                raise self.fail(c, ("resources",), f"{key}: {value!r} is not a Kubernetes quantity",
                                label=where) from None
            if key == "cpu":
                cpu = q
            elif key == "memory":
                memory = int(q)
            elif key in PLAIN_RESOURCES or key.startswith("hugepages-"):
                continue
            elif int(q) > 0:
                accel[key] = int(q)
        lifecycle = c.get("lifecycle") or {}
        # The prober expands exec probe commands against the container's static env only
        # (kubelet ExpandContainerCommandOnlyStatic: `value` as written, "" for valueFrom); hooks are not expanded.
        static = {str(e.get("name")): ("" if "valueFrom" in e else str(e.get("value", "")))
                  for e in c.get("env") or []}
        return Container(
            name=str(c.get("name")), image=str(image),
            command=_strs(c.get("command")), args=_strs(c.get("args")),
            working_dir=c.get("workingDir"),
            env=self.env(c, where),
            ports=self.ports(c, where),
            cpu=cpu, memory=memory, accelerators=accel,
            mounts=[self.mount(m, volumes, where) for m in c.get("volumeMounts") or []],
            post_start=self.hook(lifecycle.get("postStart"), f"{where} postStart"),
            pre_stop=self.hook(lifecycle.get("preStop"), f"{where} preStop"),
            liveness=self.probe(c.get("livenessProbe"), f"{where} livenessProbe", static),
            readiness=self.probe(c.get("readinessProbe"), f"{where} readinessProbe", static),
            startup=self.probe(c.get("startupProbe"), f"{where} startupProbe", static),
            security=k8s_security(pod, c, f"{self.source}: {where}"),
        )

    def ports(self, c: dict, where: str) -> list[Port]:
        value = c.get("ports") or []
        if not isinstance(value, list):
            raise self.fail(c, ("ports",), f"is {type(value).__name__}", expected="a list", label=where)
        return [k8s_port(p, f"{self.source}: {where} ports", value, i) for i, p in enumerate(value)]

    def env(self, c: dict, where: str) -> list[EnvSource]:
        out: list[EnvSource] = []
        for n, src in enumerate(c.get("envFrom") or []):
            prefix = src.get("prefix", "")
            at = (c, ("envFrom", n))
            if "configMapRef" in src:
                ref = src["configMapRef"]
                data = self.configmap(ref.get("name"), where, bool(ref.get("optional")))
                out += [EnvSource(prefix + k, env_text(v, prefix + k, f"{self.source}: {where}", "ConfigMap", *at),
                                  literal=False) for k, v in data.items()]
            elif "secretRef" in src:
                ref = src["secretRef"]
                data = self.secret(ref.get("name"), where, bool(ref.get("optional")))
                out += [EnvSource(prefix + k, env_text(v, prefix + k, f"{self.source}: {where}", "Secret", *at),
                                  literal=False, secret=True) for k, v in data.items()]
        for i, e in enumerate(c.get("env") or []):
            name = e.get("name")
            if "valueFrom" not in e:
                out.append(EnvSource(name, str(e.get("value", ""))))
                continue
            vf = e["valueFrom"] or {}
            if "configMapKeyRef" in vf:
                ref = vf["configMapKeyRef"]
                data = self.configmap(ref.get("name"), f"{where} env {name}", bool(ref.get("optional")))
                if ref.get("key") not in data:
                    if ref.get("optional") or ref.get("name") in self.configmap_missing:
                        continue
                    raise self.fail(c, ("env", i, "valueFrom", "configMapKeyRef"),
                                    f"ConfigMap key {ref.get('name')}/{ref.get('key')} is not in the input",
                                    label=f"{where} env {name}")
                out.append(EnvSource(name, env_text(data[ref["key"]], name, f"{self.source}: {where}", "ConfigMap",
                                                    c, ("env", i, "valueFrom")), literal=False))
            elif "secretKeyRef" in vf:
                ref = vf["secretKeyRef"]
                data = self.secret(ref.get("name"), f"{where} env {name}", bool(ref.get("optional")))
                if ref.get("key") not in data:
                    if ref.get("optional") or ref.get("name") in self.secret_missing:
                        continue
                    raise self.fail(c, ("env", i, "valueFrom", "secretKeyRef"),
                                    f"Secret {ref.get('name')!r} has no key {ref.get('key')!r}",
                                    label=f"{where} env {name}")
                out.append(EnvSource(name, env_text(data[ref["key"]], name, f"{self.source}: {where}", "Secret",
                                                    c, ("env", i, "valueFrom")), literal=False, secret=True))
            elif "fieldRef" in vf:
                out.append(EnvSource(name, literal=False, field_path=vf["fieldRef"].get("fieldPath")))
            elif "resourceFieldRef" in vf:
                ref = vf["resourceFieldRef"]
                out.append(EnvSource(name, literal=False, field_path="resource:" + str(ref.get("resource"))))
            else:
                raise self.fail(c, ("env", i, "valueFrom"), f"unsupported valueFrom {sorted(vf)}",
                                label=f"{where} env {name}")
        return out

    def secret(self, name: str, where: str, optional: bool) -> dict[str, bytes]:
        if name in self.secrets:
            return self.secrets[name]
        if optional:
            return {}
        # Reported later by the loader, which can make some secrets itself
        # (the MPI ssh keys) and knows the command-line options to suggest.
        self.secret_missing.setdefault(name, where)
        return {}

    def configmap(self, name: str, where: str, optional: bool) -> dict[str, bytes]:
        if name in self.configmaps:
            return self.configmaps[name]
        if not optional:
            self.configmap_missing.setdefault(name, where)
        return {}

    def mount(self, m: dict, volumes: dict[str, dict], where: str) -> Mount:
        # both required: shapes.py refused a mount without them, as the API server does
        vname: str = m["name"]
        target: str = m["mountPath"]
        vol = volumes.get(vname)
        if vol is None:
            raise self.fail(m, ("name",), f"volume {vname!r} is not in the pod's volumes",
                            label=f"{where} volumeMounts")
        ro = bool(m.get("readOnly", False))
        sub = safe_subpath(m.get("subPath"), f"{self.source}: {where} volumeMounts {vname}", m, ("subPath",))
        # a null source is unset; a volume with none is an emptyDir (the API server's SetDefaults_Volume)
        given = {key for key, value in vol.items() if value is not None and key != "name"}
        if "persistentVolumeClaim" in given:
            claim = safe_name(vol["persistentVolumeClaim"].get("claimName"), "claimName",
                              f"{self.source}: {where} volume {vname}", vol, ("persistentVolumeClaim", "claimName"))
            root = f"{self.state_dir}/volumes/{claim}"
            src = root + (f"/{sub}" if sub else "")
            return Mount(target, "bind", src, ro or bool(vol["persistentVolumeClaim"].get("readOnly")), root=root)
        if "hostPath" in given:
            host = (vol["hostPath"] or {}).get("path")
            if not isinstance(host, str) or not host.startswith("/") or "\0" in host:
                raise self.fail(vol, ("hostPath", "path"), f"{host!r} is not an absolute path",
                                hint="Kubernetes requires an absolute hostPath", label=f"{where} volume {vname}")
            src = host + (f"/{sub}" if sub else "")
            return Mount(target, "bind", src, ro, host_path=True)
        if "emptyDir" in given or not given:
            if (vol.get("emptyDir") or {}).get("medium") == "Memory":
                limit = (vol.get("emptyDir") or {}).get("sizeLimit")
                return Mount(target, "tmpfs", vname, ro, size=int(parse_quantity(limit)) if limit else None)
            return Mount(target, "emptydir", vname, ro)
        if "configMap" in given or "secret" in given:
            is_secret = "secret" in given
            ref = vol["secret" if is_secret else "configMap"] or {}
            oname = str(ref.get("secretName" if is_secret else "name") or "")  # required: shapes.py
            data = (self.secret if is_secret else self.configmap)(oname, f"{where} volume {vname}",
                                                                  bool(ref.get("optional")))
            mode = int(ref.get("defaultMode", 0o644))
            items = ref.get("items")
            files: list[FileEntry] = []
            if items:
                for it in items:
                    safe_subpath(it.get("path", it.get("key")), f"{self.source}: {where} volume {vname} items path",
                                 it, ("path" if "path" in it else "key",))
                    if it.get("key") in data:
                        files.append(FileEntry(it.get("path", it["key"]), data[it["key"]], int(it.get("mode", mode))))
                    elif oname not in self.secret_missing and oname not in self.configmap_missing \
                            and not ref.get("optional"):
                        raise self.fail(it, ("key",), f"{oname!r} has no key {it.get('key')!r}",
                                        label=f"{where} volume {vname}")
            else:
                files = [FileEntry(k, v, mode) for k, v in data.items()]
            if sub:
                files = [FileEntry("", f.data, f.mode) for f in files if f.path == sub]
                return Mount(target, "files", oname, True, files, is_secret, single_file=True)
            return Mount(target, "files", oname, True, files, is_secret)
        raise self.fail(vol, (), f"volume type {sorted(given)} is not supported by the "
                        "emulator", hint="use persistentVolumeClaim, hostPath, emptyDir, configMap or secret",
                        label=f"{where} volume {vname}")

    def hook(self, h: dict | None, where: str) -> list[str] | None:
        if not h:
            return None
        if "exec" in h:
            return _strs((h["exec"] or {}).get("command")) or None
        raise self.fail(h, (), f"handler {sorted(h)} is not supported by the emulator (only exec)", label=where)

    def probe(self, p: dict | None, where: str, static_env: dict[str, str] | None = None) -> Probe | None:
        if not p:
            return None
        timing = Probe(
            "exec",
            initial_delay=float(p.get("initialDelaySeconds", 0)),
            # 0 is the API server's default (SetDefaults_Probe), as leaving the field out
            period=float(p.get("periodSeconds") or 10),
            timeout=float(p.get("timeoutSeconds") or 1),
            success_threshold=int(p.get("successThreshold") or 1),
            failure_threshold=int(p.get("failureThreshold") or 3),
        )
        if "exec" in p:
            command = _strs((p["exec"] or {}).get("command"))
            if command is not None:
                command = [expand_references(w, static_env or {}) for w in command]
            return replace(timing, command=command)
        if "tcpSocket" in p:
            t = p["tcpSocket"] or {}
            return replace(timing, kind="tcp", port=t.get("port"), host=t.get("host"))
        if "httpGet" in p:
            h = p["httpGet"] or {}
            return replace(timing, kind="http", port=h.get("port"), host=h.get("host"), path=h.get("path", "/"),
                           scheme=h.get("scheme", "HTTP"),
                           headers=[(x["name"], x["value"]) for x in h.get("httpHeaders") or []])
        raise self.fail(p, (), f"probe handler {sorted(p)} is not supported by the emulator "
                        "(exec, tcpSocket, httpGet)", label=where)




def _strs(v: Any) -> list[str] | None:
    if v is None:
        return None
    return [str(x) for x in v]


def _opt_int(v: Any) -> int | None:
    return None if v in (None, "") else int(v)


def _opt_float(v: Any) -> float | None:
    return None if v in (None, "") else float(v)


def _dedupe(xs: list[str]) -> list[str]:
    out: list[str] = []
    for x in xs:
        if x not in out:
            out.append(x)
    return out
