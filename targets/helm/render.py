"""`helm`: a chart whose default render is exactly the `k8s` target's objects.

The templates (`chart/templates/`) are the same for every job; what a job
is lives in the generated `values.yaml` (its knobs) and `values.schema.json`
(their limits).  The templates compute the topology from `.Values` (replicas and
ports per role), so changing a role's replicas re-derives every host list, the
TF cluster, WORLD_SIZE / PET_NNODES, DMLC_NUM_*, TRAINSPEC_NUM_* and the MPI
hostfile.

Per-replica templating (`{{ index }}`, `{{ hosts.ps | join(',') }}` ... in
command, args and env) is compiled to *data*: each templated string becomes a
list of parts (literal text, `{var: index}`, `{hosts: ps, join: ","}`) that the
chart assembles per replica.  No user text ever becomes template code, and the
chart never calls `tpl`, so `{{` in user strings comes out literally.  A template
the chart cannot recompute (filters, arithmetic...) is kept as the per-replica
text compiled for the spec's topology (`{byIndex: [...], pin: ...}`); the chart
then refuses, with a message, a topology other than the compiled one.

`values.workload` picks the objects: `jobs` (default) renders exactly the `k8s`
target's, `jobset` exactly the `jobset` target's (one JobSet; the chart refuses,
with `fail`, what targets/jobset/checks.py refuses).  A `byIndex` text carries
the jobset target's text for it (`jobset`), since a JobSet role has one pod template.

Everything is in docs/targets-helm-compose.md.
"""

from __future__ import annotations

import json
import os

from trainspec.compiler import kube
from trainspec.compiler.frameworks import CONTAINER_NAME
from trainspec.compiler.kube_rules import applies
from trainspec.compiler.model import (
    CLEAN_POD_POLICIES,
    GENERIC,
    GENERIC_SUCCESS_POLICIES,
    MAX_REPLICAS,
    MPI_IMPLEMENTATIONS,
    NPROC_WORDS,
    RESTART_POLICIES,
    ROLE_LIMITS,
    TF_SUCCESS_POLICIES,
    ConfigMapRef,
    FieldRef,
    ResourceFieldRef,
    SecretRef,
)
from trainspec.compiler.plan import HostList, JobPlan, RolePlan, Text
from trainspec.compiler.schemes import NamingScheme

from .. import common
from ..jobset.scheme import scheme_for as jobset_scheme
from ..k8s.scheme import INDEXED
from ..yamlout import dump
from . import pod_values
from .chart_rules import fill

CHART_DIR = os.path.join(os.path.dirname(__file__), "chart")
TEMPLATE_FILES = ("_helpers.tpl", "topology.yaml", "services.yaml", "jobs.yaml", "NOTES.txt")
CHART_VERSION = "0.1.0"
WORKLOADS = ("jobs", "jobset")  # values.workload: the k8s target's objects, or the jobset target's



def _default_render_checked(plan: JobPlan) -> None:
    """The chart's render with its default values is the k8s target's objects (tests/targets/test_helm.py holds them
    equal): checked as the API server checks them, as the helm target's (targets/written.py)."""
    from .. import written
    from ..k8s.render import objects

    written.checked(plan, "helm", objects(plan), whole_file=True)


def render(plan: JobPlan) -> dict[str, str]:
    if plan.patches.get("k8s"):
        common.warn_dropped(plan, "helm", {"patches.k8s (the chart renders the unpatched k8s objects)"})
    _default_render_checked(plan)
    values = chart_values(plan)
    files = {
        "helm/Chart.yaml": chart_yaml(plan),
        "helm/values.yaml": values_yaml(plan, values),
        "helm/values.schema.json": json.dumps(values_schema(plan, values), indent=2) + "\n",
    }
    for name in TEMPLATE_FILES:
        with open(os.path.join(CHART_DIR, "templates", name), encoding="utf-8") as handle:
            files[f"helm/templates/{name}"] = fill(name, handle.read(), plan.framework, uses_names(plan),
                                                   applies("job-success-policy", plan.kube_version))
    return files


def uses_names(plan: JobPlan) -> bool:
    """Whether the chart needs spec v1.2's name and generic-success code (chart_rules.NAMES_GENERATED)."""
    return plan.framework == GENERIC or plan.container_name != CONTAINER_NAME[plan.framework] or \
        any(role.task_name or role.container_name for role in plan.roles)


# --- Chart.yaml ---------------------------------------------------------------------------------

def chart_yaml(plan: JobPlan) -> str:
    image = _top_image(plan)
    chart = {
        "apiVersion": "v2",
        "name": plan.name,
        "description": f"{plan.framework} training job {plan.name} "
                       f"({', '.join(f'{r.name} x{r.count}' for r in plan.roles)}), compiled by trainspec",
        "type": "application",
        "version": CHART_VERSION,
        "appVersion": split_image(image)["tag"] or "latest",
        "keywords": ["trainspec", "distributed-training", plan.framework],
        "annotations": {"trainspec.dev/framework": plan.framework, "trainspec.dev/success-rule": plan.success.text},
    }
    return dump(chart, common.header(plan))


# --- values -------------------------------------------------------------------------------------

def split_image(ref: str) -> dict[str, str]:
    """`registry:5000/ns/img:tag` -> repository + tag; digests stay in the repository."""
    if "@" in ref:
        return {"repository": ref, "tag": ""}
    colon, slash = ref.rfind(":"), ref.rfind("/")
    if colon > slash and colon < len(ref) - 1:  # `name:` has no tag: the chart would drop the colon
        return {"repository": ref[:colon], "tag": ref[colon + 1:]}
    return {"repository": ref, "tag": ""}


def _top_image(plan: JobPlan) -> str:
    return plan.image or (plan.roles[0].image if plan.roles else "")


def chart_values(plan: JobPlan) -> dict:
    top_image = _top_image(plan)
    values: dict = {"name": plan.name, "framework": plan.framework, "workload": "jobs",
                    "image": split_image(top_image),
                    "accelerator": plan.accelerator, "labels": dict(plan.labels),
                    "annotations": dict(plan.annotations)}
    if plan.container_name != CONTAINER_NAME[plan.framework]:
        values["containerName"] = plan.container_name
    if plan.framework == GENERIC:
        values["roleOrder"] = [role.name for role in plan.roles]  # the spec's order (Helm maps have none)
        if plan.success.role:
            values["success"] = {"role": plan.success.role,
                                 "policy": "AnyReplica" if plan.success.scope == "any" else "AllReplicas"}
    for key, value in (("backoffLimit", plan.backoff_limit), ("activeDeadlineSeconds", plan.active_deadline_seconds),
                       ("ttlSecondsAfterFinished", plan.cleanup.ttl_seconds_after_finished),
                       ("cleanPodPolicy", plan.cleanup.pods)):
        if value is not None:
            values[key] = value
    scheduling = common.scheduling_fields(plan)
    if plan.scheduling.queue:
        scheduling["queue"] = plan.scheduling.queue  # Kueue's label on each Job / Deployment, as the k8s target
    if scheduling:
        values["scheduling"] = scheduling
    if plan.framework == "tensorflow" and plan.success_policy:
        values["tensorflow"] = {"successPolicy": plan.success_policy}
    if plan.framework == "pytorch":
        values["pytorch"] = {"nprocPerNode": plan.nproc_per_node or "auto"}
        if plan.elastic is not None:
            from ..kubeflow.render import elastic_policy

            values["pytorch"]["elastic"] = elastic_policy(plan)
    if plan.framework == "mpi":
        mpi: dict = {"implementation": plan.mpi_implementation}
        if plan.slots_per_worker:
            mpi["slotsPerWorker"] = plan.slots_per_worker
        if plan.mpi_ssh_path != "/root/.ssh":
            mpi["sshAuthMountPath"] = plan.mpi_ssh_path
        values["mpi"] = mpi
    volumes = []
    for v in plan.volumes:
        entry = {"name": v.name, "mountPath": v.mount_path}
        if v.read_only:
            entry["readOnly"] = True
        source = common.volume(v)
        source.pop("name")
        entry["source"] = source
        volumes.append(entry)
    values["volumes"] = volumes
    values.update(pod_values.job_values(plan))
    converter = _Converter(plan)
    values["roles"] = {role.name: _role_values(plan, role, top_image, converter) for role in plan.roles}
    return values


def _resources(res) -> dict:
    out: dict = {}
    if res.cpu is not None:
        out["cpu"] = res.cpu
    if res.memory is not None:
        out["memory"] = res.memory
    if res.gpu:
        out["gpu"] = res.gpu
    if res.shm:
        out["shm"] = res.shm
    for key, amounts in (("requests", res.requests), ("limits", res.limits)):
        if amounts:
            out[key] = dict(amounts)
    return out


def _env_value(name: str, value) -> dict:
    if isinstance(value, SecretRef):
        return {"name": name, "secretKeyRef": {"name": value.name, "key": value.key}}
    if isinstance(value, ConfigMapRef):
        return {"name": name, "configMapKeyRef": {"name": value.name, "key": value.key}}
    if isinstance(value, (FieldRef, ResourceFieldRef)):
        return {"name": name, **common.downward(value)}
    return {"name": name, "value": value}


def _role_values(plan: JobPlan, role: RolePlan, top_image: str, converter: _Converter) -> dict:
    out: dict = {"replicas": role.count, "port": role.port}
    if role.task_name:
        out["taskName"] = role.task_name
    if role.container_name:
        out["containerName"] = role.container_name
    if role.image != top_image:
        out["image"] = split_image(role.image)
    sources = role.sources
    command, args = sources.command, sources.args
    # every replica's text with the k8s target's host names (the chart's default workload)
    replicas = [role.renders[INDEXED.name].of(i) for i in range(role.count)]

    def shared(key: str, k: int) -> dict[str, str]:
        return {name: text for name, text in (("k8s", _shared_text(plan, role, INDEXED, key, k)),
                                              ("jobset", _shared_text(plan, role, jobset_scheme(plan.framework),
                                                                      key, k))) if text is not None}

    if command is not None:
        out["command"] = [converter.text(role, s, [r.command[k] for r in replicas if r.command is not None],
                                         shared("command", k)) for k, s in enumerate(command)]
    if args is not None:
        out["args"] = [converter.text(role, s, [r.args[k] for r in replicas if r.args is not None],
                                      shared("args", k)) for k, s in enumerate(args)]
    if role.working_dir:
        out["workingDir"] = role.working_dir
    env = []
    for k, (name, value) in enumerate(sources.env):
        if isinstance(value, Text):
            rendered = [next(str(v.value) for v in r.env if v.name == name) for r in replicas]
            value = converter.text(role, value, rendered, shared("env", k))
        env.append(_env_value(name, value))
    out["env"] = env
    out["restartPolicy"] = role.restart_policy
    out["resources"] = _resources(role.resources)
    if role.init_containers:
        inits = []
        for init in role.init_containers:
            entry: dict = {"name": init.name}
            if init.image:
                entry["image"] = init.image
            if init.command is not None:
                entry["command"] = list(init.command)
            if init.args is not None:
                entry["args"] = list(init.args)
            if init.working_dir:
                entry["workingDir"] = init.working_dir
            if init.env:
                entry["env"] = [_env_value(name, value) for name, value in init.env]
            res = _resources(init.resources)
            if res:
                entry["resources"] = res
            if init.restart_policy:
                entry["restartPolicy"] = init.restart_policy
            inits.append(entry)
        out["initContainers"] = inits
    if role.lifecycle is not None:
        hooks = {}
        if role.lifecycle.post_start:
            hooks["postStart"] = common.handler(role.lifecycle.post_start)
        if role.lifecycle.pre_stop:
            hooks["preStop"] = common.handler(role.lifecycle.pre_stop)
        out["lifecycle"] = hooks
    probes = {}
    for key, p in (("livenessProbe", role.probes.liveness), ("readinessProbe", role.probes.readiness),
                   ("startupProbe", role.probes.startup)):
        if p is not None:
            probes[key] = common.probe(p, escape=False)  # as written; the chart escapes exec commands
    if probes:
        out["probes"] = probes
    out.update(pod_values.role_values(plan, role))
    return out


def _shared_text(plan: JobPlan, role: RolePlan, scheme: NamingScheme, key: str, k: int) -> str | None:
    """One pod template's kubelet text (host names of `scheme`: the k8s target's or the jobset target's) for
    item k of command / args / env, or None when it has none."""
    render = role.renders.get(scheme.name)
    if render is None or not (render.uniform or render.shared is not None):
        return None
    rendered = render.of(0) if render.uniform else render.shared
    assert rendered is not None
    if key == "env":
        return common.env_entry(rendered.env[k], plan.topology_name).get("value")
    items = getattr(rendered, key)
    return common.escape_k8s(items[k]) if render.uniform else items[k]


class _Converter:
    """Spec templates -> chart parts (data), checked against the plan's rendering.

    The planner described each template (compiler/rendering.py: `Text.parts`, `Text.names`);
    here they become the chart's part objects, kept only when the chart would rebuild
    every replica's text exactly.
    """

    def __init__(self, plan: JobPlan):
        self.plan = plan
        self.pin = ",".join(f"{r.name}={r.count}:{r.port}" for r in plan.roles)
        self.hosts = plan.hosts(INDEXED)

    def text(self, role: RolePlan, source: Text, rendered: list[str], shared: dict[str, str]):
        if not source.templated:
            return source.source
        parts = None if source.parts is None else [_part(p) for p in source.parts]
        if parts is not None and all(self.assemble(parts, role, i) == text for i, text in enumerate(rendered)):
            return parts[0] if len(parts) == 1 and isinstance(parts[0], str) else parts
        pin_namespace = source.names is None or "job" in source.names
        part: dict = {"byIndex": list(rendered), "pin": self.pin + (f"@{self.plan.namespace}" if pin_namespace else "")}
        if pin_namespace:
            part["pinNamespace"] = True
        part.update(shared)  # k8s / jobset: the role's one pod template of that workload (kubelet text)
        return [part]

    def assemble(self, parts: list, role: RolePlan, index: int) -> str:
        """What the chart's `trainspec.text` makes of `parts` for one replica (at the compiled topology)."""
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            elif "var" in part:
                out.append(str({"index": index, "replicas": role.count, "port": role.port,
                                "job.name": self.plan.name, "job.namespace": self.plan.namespace}[part["var"]]))
            else:
                out.append(part["join"].join(self.hosts[part["hosts"]]))
        return "".join(out)


def _part(part) -> str | dict:
    """A template part as chart data: text, {var: name} or {hosts: role, join: separator}."""
    if isinstance(part, str):
        return part
    if isinstance(part, HostList):
        return {"hosts": part.role, "join": part.separator}
    return {"var": part.name}


# --- values.yaml text ---------------------------------------------------------------------------

_COMMENTS = {
    "name": "name: the job name; every object name derives from it (<name>-<role>, <name>-topology;\n"
            "hosts <name>-<role>-<index>.<name>).",
    "framework": "framework: fixed by the spec (the templates compute its topology environment).",
    "workload": "workload: jobs (per role one Indexed Job, completions = replicas, or a StatefulSet for\n"
                "restartPolicy Always, and one headless Service: the k8s target's objects) or jobset (one JobSet,\n"
                "jobset.x-k8s.io/v1alpha2, JobSet v0.12 on Kubernetes >= 1.33: the jobset target's objects;\n"
                "restartPolicy Always is refused).",
    "image": "image: the default image of every role (repository and tag; a digest stays in repository).",
    "accelerator": "accelerator: the extended resource that roles.<role>.resources.gpu requests "
                   "(nvidia.com/gpu, amd.com/gpu, huawei.com/Ascend910...).",
    "labels": "labels: copied onto every object.",
    "annotations": "annotations: copied onto every object.",
    "backoffLimit": "backoffLimit: retries of a role's Job (OnFailure: across its pods; ExitCode: per index).",
    "activeDeadlineSeconds": "activeDeadlineSeconds: a role's Job fails after this many seconds.",
    "ttlSecondsAfterFinished": "ttlSecondsAfterFinished: finished Jobs are deleted after this many seconds.",
    "cleanPodPolicy": "cleanPodPolicy: recorded on the topology ConfigMap for tools (Running | All | None).",
    "scheduling": "scheduling: schedulerName and priorityClassName of every pod; queue: the Kueue LocalQueue "
                  "(label kueue.x-k8s.io/queue-name on each Job / StatefulSet).",
    "tensorflow": "tensorflow: successPolicy (ChiefOrWorker0 | AllWorkers).",
    "pytorch": "pytorch: nprocPerNode (an integer, or auto | cpu | gpu); WORLD_SIZE = replicas x nprocPerNode.",
    "mpi": "mpi: implementation (OpenMPI | Intel | MPICH) and slotsPerWorker (unset: the worker's gpu count, "
           "else 1).",
    "volumes": "volumes: mounted into every role's containers; source is a Kubernetes volume source.",
    "containerName": "containerName: the main container's name in every role (roles.<role>.containerName overrides\n"
                     "it; roles.<role>.taskName names the role's replicatedJob with workload jobset).",
    "roleOrder": "roleOrder: framework generic: the roles in the spec's order (every object lists them so).",
    "success": "success: framework generic: the role whose replicas decide the job's success (policy AllReplicas |\n"
               "AnyReplica); unset: every replica of every role.",
    "roles": """roles: one entry per role.  Changing replicas or port recomputes the whole topology
(host lists, TF_CONFIG cluster, WORLD_SIZE, DMLC_NUM_*, MPI hostfile) for every replica.
  replicas, port        the role's replica count and port
  image                 {repository, tag}: overrides the top-level image for this role
  command, args         lists of strings; an item may be a list of parts (the spec's
                        {{ ... }} templates compiled to data), assembled per replica:
                          "text"                       literal text
                          {var: index}                 also replicas, port, job.name, job.namespace
                          {hosts: ps, join: ","}       the role's host:port list, joined
                          {byIndex: [...], pin: ...}   per-replica text compiled for one topology
                                                       (the chart refuses another topology)
                        Text is never evaluated by Helm: "{{" stays "{{".
  env                   list of {name, value} (value: text or parts), {name, secretKeyRef: {name, key}}
                        or {name, configMapKeyRef: {name, key}}; a name here replaces the
                        framework variable of the same name
  restartPolicy         Never | OnFailure | Always (a StatefulSet) | ExitCode (1-127 fail, signals retry)
  resources             cpu, memory (Kubernetes quantities), gpu (count of `accelerator`), shm (/dev/shm size)
  initContainers, lifecycle, probes   as in the spec, in Kubernetes form""",
}


def values_yaml(plan: JobPlan, values: dict) -> str:
    chunks = [common.header(plan, "Values of the chart: the knobs of the job. Limits are in values.schema.json.")]
    for key, value in values.items():
        text = _COMMENTS.get(key) or pod_values.COMMENTS[key]
        comment = "".join(f"# {line}".rstrip() + "\n" for line in text.splitlines())
        chunks.append("\n" + comment + dump({key: value}))
    return "".join(chunks)


# --- values.schema.json -------------------------------------------------------------------------

# The schema's patterns and enums are the validator's own (compiler.kube, compiler.model), not copies.
QUANTITY = kube.QUANTITY_SCHEMA
DNS1035 = kube.DNS1035_LABEL.pattern
DNS1123 = kube.DNS1123_SUBDOMAIN.pattern
RESOURCE_NAME = kube.RESOURCE_NAME.pattern
ENV_NAME = kube.ENV_NAME.pattern  # Kubernetes 1.30-1.31; later ones: kube_rules.env_name_pattern


def _obj(properties: dict, required=(), additional=False) -> dict:
    out = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    out["additionalProperties"] = additional
    return out


def _quantity(description: str) -> dict:
    return {"description": description,
            "oneOf": [{"type": "string", "pattern": QUANTITY}, {"type": "number", "minimum": 0}]}


def values_schema(plan: JobPlan, values: dict) -> dict:
    from trainspec.compiler.kube_rules import env_name_pattern, job_name_pattern

    env_name, job_name = env_name_pattern(plan.kube_version), job_name_pattern(plan.kube_version)
    string_map = {"type": "object", "additionalProperties": {"type": "string"}}
    ref = _obj({"name": {"type": "string", "pattern": DNS1123}, "key": {"type": "string", "minLength": 1}},
               required=("name", "key"))
    part = {"oneOf": [
        {"type": "string"},
        _obj({"var": {"enum": ["index", "replicas", "port", "job.name", "job.namespace"]}}, required=("var",)),
        _obj({"hosts": {"enum": [r.name for r in plan.roles]}, "join": {"type": "string"}}, required=("hosts",)),
        _obj({"byIndex": {"type": "array", "items": {"type": "string"}}, "pin": {"type": "string"},
              "pinNamespace": {"type": "boolean"}, "jobset": {"type": "string"}, "k8s": {"type": "string"}},
             required=("byIndex", "pin")),
    ]}
    text = {"oneOf": [{"type": "string"}, {"type": "array", "items": part}]}
    strings = {"type": "array", "items": text}
    env = {"type": "array", "items": {"oneOf": [
        _obj({"name": {"type": "string", "pattern": env_name}, "value": text}, required=("name", "value")),
        _obj({"name": {"type": "string", "pattern": env_name}, "secretKeyRef": ref}, required=("name", "secretKeyRef")),
        _obj({"name": {"type": "string", "pattern": env_name}, "configMapKeyRef": ref},
             required=("name", "configMapKeyRef")),
        _obj({"name": {"type": "string", "pattern": env_name}, "fieldRef": {"type": "object"}},
             required=("name", "fieldRef")),
        _obj({"name": {"type": "string", "pattern": env_name}, "resourceFieldRef": {"type": "object"}},
             required=("name", "resourceFieldRef")),
    ]}}
    resources = _obj({
        "cpu": _quantity("CPU request and limit, e.g. \"4\" or 500m"),
        "memory": _quantity("memory request and limit, e.g. 8Gi"),
        "gpu": {"type": "integer", "minimum": 0, "description": "count of the accelerator resource"},
        "shm": {"type": "string", "pattern": QUANTITY, "description": "size of /dev/shm, e.g. 8Gi"},
        "requests": {"type": "object", "additionalProperties": _quantity("a request")},
        "limits": {"type": "object", "additionalProperties": _quantity("a limit")},
    })
    pod_job, pod_role = pod_values.schema(DNS1123, _quantity(""))
    image = _obj({"repository": {"type": "string", "minLength": 1}, "tag": {"type": "string"}},
                 required=("repository",))
    any_object = {"type": "object"}
    init = _obj({"name": {"type": "string", "pattern": DNS1123}, "image": {"type": "string", "minLength": 1},
                 "command": {"type": "array", "items": {"type": "string"}},
                 "args": {"type": "array", "items": {"type": "string"}},
                 "workingDir": {"type": "string"}, "env": env, "resources": resources,
                 "restartPolicy": {"enum": ["Always"]}}, required=("name",))
    volume = _obj({"name": {"type": "string", "pattern": DNS1123}, "mountPath": {"type": "string", "pattern": "^/"},
                   "readOnly": {"type": "boolean"},
                   "source": {"type": "object", "minProperties": 1, "maxProperties": 1}},
                  required=("name", "mountPath", "source"))
    roles = {}
    limits = dict(ROLE_LIMITS[plan.framework])
    if plan.elastic is not None:
        limits["master"] = (0, 1)
    label = {"type": "string", "pattern": kube.DNS1123_LABEL.pattern, "maxLength": 63}
    for role in plan.roles:
        low, high = limits.get(role.name, (0, None))  # generic: any role, 0 or more replicas
        replicas = {"type": "integer", "minimum": low, "maximum": high if high is not None else MAX_REPLICAS,
                    "description": f"{role.name} replicas"}
        roles[role.name] = _obj({
            "replicas": replicas,
            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "image": image,
            "command": strings,
            "args": strings,
            "workingDir": {"type": "string", "pattern": "^/"},
            "env": env,
            "restartPolicy": {"enum": list(RESTART_POLICIES)},
            "resources": resources,
            "initContainers": {"type": "array", "items": init},
            "lifecycle": _obj({"postStart": any_object, "preStop": any_object}),
            "probes": _obj({"livenessProbe": any_object, "readinessProbe": any_object, "startupProbe": any_object}),
            **pod_role,
            "volumes": {"type": "array", "items": volume},
            **({"taskName": label, "containerName": label} if uses_names(plan) else {}),
        }, required=("replicas", "port", "restartPolicy"))
    nonneg = {"type": "integer", "minimum": 0}
    properties = {
        "name": {"type": "string", "pattern": job_name, "maxLength": kube.MAX_NAME},
        "framework": {"const": plan.framework},
        "workload": {"enum": list(WORKLOADS)},
        "image": image,
        "accelerator": {"type": "string", "pattern": RESOURCE_NAME},
        "labels": string_map,
        "annotations": string_map,
        "backoffLimit": nonneg,
        "activeDeadlineSeconds": {"type": "integer", "minimum": 1},
        "ttlSecondsAfterFinished": nonneg,
        "cleanPodPolicy": {"enum": list(CLEAN_POD_POLICIES)},
        # schedulerName: any name to the API server (`Volcano` too; kube_rules scheduling-names)
        "scheduling": _obj({"schedulerName": {"type": "string", "minLength": 1},
                            "priorityClassName": {"type": "string", "pattern": DNS1123},
                            "queue": {"type": "string", "minLength": 1, "maxLength": 63}}),
        "volumes": {"type": "array", "items": volume},
        "roles": _obj(roles, required=tuple(roles)),
        **pod_job,
    }
    if uses_names(plan):
        properties["containerName"] = label
    if plan.framework == GENERIC:
        names = [role.name for role in plan.roles]
        properties["roleOrder"] = {"type": "array", "items": {"enum": names}, "uniqueItems": True}
        properties["success"] = _obj({"role": {"enum": names}, "policy": {"enum": list(GENERIC_SUCCESS_POLICIES)}},
                                     required=("role",))
    if plan.framework == "tensorflow":
        properties["tensorflow"] = _obj({"successPolicy": {"enum": list(TF_SUCCESS_POLICIES)}})
    if plan.framework == "pytorch":
        properties["pytorch"] = _obj({"nprocPerNode": {"oneOf": [
            {"type": "string", "pattern": f"^([0-9]+|{'|'.join(NPROC_WORDS)})$"}, {"type": "integer", "minimum": 1}]},
            "elastic": {"type": "object"}})
    if plan.framework == "mpi":
        properties["mpi"] = _obj({"implementation": {"enum": list(MPI_IMPLEMENTATIONS)},
                                  "slotsPerWorker": {"type": "integer", "minimum": 1},
                                  "sshAuthMountPath": {"type": "string", "pattern": "^/"}})
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": f"values of the trainspec chart {plan.name}",
        **_obj(properties, required=("name", "framework", "image", "accelerator", "roles")),
    }
