"""OpenPAI job configs -> a `framework: generic` spec: the v1 JSON template and protocol v2 YAML.

v1: `jobName`, `image`, `dataDir`/`outputDir`/`codeDir` (OpenPAI exports them as $PAI_DATA_DIR,
$PAI_OUTPUT_DIR, $PAI_CODE_DIR: so does the spec's env), `virtualCluster` (-> scheduling.queue),
`retryCount` (-> backoffLimit), `taskRoles[].{name, taskNumber, cpuNumber, memoryMB, gpuNumber,
command, minFailedTaskCount, minSucceededTaskCount}`.
v2: `name`, `prerequisites` (dockerimage entries by name), `parameters` (substituted into the
commands as OpenPAI does at submission: `<% $parameters.x %>`), `secrets` (never written into a
spec: a command using one is refused), `taskRoles.<name>.{instances, dockerImage,
resourcePerInstance{cpu, memoryMB, gpu}, commands, completion}`, `defaults.virtualCluster`,
`jobRetryCount`.

Each task role is a role (its name made a DNS-1123 label); a role whose every instance must
succeed (minSucceeded = its count) or any one (1) becomes `success`; OpenPAI retries the whole job,
never one task, so restartPolicy is Never.  What no spec field holds is a loss: no trainspec target
writes OpenPAI, so no patch can carry it.  $PAI_* variables other than the three directories are
set by OpenPAI's runtime only: a command that reads one is a loss too.
"""

from __future__ import annotations

import re

from .assemble import SPEC_ORDER, assemble, ordered
from .context import Context
from .pod import RoleDraft

V1_KEYS = ("jobName", "image", "dataDir", "outputDir", "codeDir", "virtualCluster", "retryCount", "taskRoles")
V1_ROLE_KEYS = ("name", "taskNumber", "cpuNumber", "memoryMB", "gpuNumber", "command", "minFailedTaskCount",
                "minSucceededTaskCount")
V2_KEYS = ("protocolVersion", "name", "type", "version", "contributor", "description", "prerequisites",
           "parameters", "secrets", "taskRoles", "defaults", "jobRetryCount")
V2_ROLE_KEYS = ("instances", "dockerImage", "resourcePerInstance", "commands", "completion")
DIRS = {"dataDir": "PAI_DATA_DIR", "outputDir": "PAI_OUTPUT_DIR", "codeDir": "PAI_CODE_DIR"}
_PAI_VAR = re.compile(r"\$\{?(PAI_[A-Za-z0-9_]+)")
_MUSTACHE = re.compile(r"<%\s*\$(\w+)\.([\w.]+)\s*%>")


def dns_label(name: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", name.lower())).strip("-")[:63] or "job"


def import_job(ctx: Context, data: dict, docs: list | None = None, runtime_paths: list[str] | None = None) -> dict:
    ctx.patchable = False  # no trainspec target writes OpenPAI: what has no spec field is lost
    v2 = str(data.get("protocolVersion", "")) == "2"
    keys = V2_KEYS if v2 else V1_KEYS
    for key in data:
        if key not in keys:
            ctx.lose((key,), f"OpenPAI {key} has no spec field")
    name = data.get("name" if v2 else "jobName")
    if not isinstance(name, str) or not name:
        raise ctx.fail(("name" if v2 else "jobName",), "the job has no name", "a string")
    meta: dict = {"name": dns_label(name)}
    if meta["name"] != name:
        ctx.comment(("metadata", "name"), f"OpenPAI name {name}")
    job: dict = {}
    env: dict = {}
    if v2:
        notes = {k: str(data[k]) for k in ("description", "contributor", "version") if k in data}
        if notes:
            meta["annotations"] = {f"openpai.org/{k}": v for k, v in notes.items()}
        queue = (data.get("defaults") or {}).get("virtualCluster") if isinstance(data.get("defaults"), dict) else None
        for key in (data.get("defaults") or {}) if isinstance(data.get("defaults"), dict) else ():
            if key != "virtualCluster":
                ctx.lose(("defaults", key), f"OpenPAI defaults.{key} has no spec field")
        retries = data.get("jobRetryCount")
    else:
        queue, retries = data.get("virtualCluster"), data.get("retryCount")
        for key, var in DIRS.items():
            if isinstance(data.get(key), str):
                env[var] = data[key]
    if isinstance(queue, str) and queue != "default":
        job["scheduling"] = {"queue": queue}
    if isinstance(retries, int) and retries > 0:
        job["backoffLimit"] = retries
    roles_in = data.get("taskRoles")
    items = list(roles_in.items()) if v2 and isinstance(roles_in, dict) else \
        [(r.get("name"), r) for r in roles_in] if isinstance(roles_in, list) and all(
            isinstance(r, dict) for r in roles_in) else []
    if not items:
        raise ctx.fail(("taskRoles",), "a job without task roles", "taskRoles " + ("by name" if v2 else "[...]"))
    images = _images(ctx, data) if v2 else {}
    drafts: dict[str, RoleDraft] = {}
    replicas: dict[str, int] = {}
    deciders: list[tuple[str, str]] = []
    for i, (rname, body) in enumerate(items):
        path: tuple = ("taskRoles", rname) if v2 else ("taskRoles", i)
        if not isinstance(rname, str) or not isinstance(body, dict):
            raise ctx.fail(path, "is not a task role", "a mapping with a name")
        role = dns_label(rname)
        if role in drafts:
            raise ctx.fail(path, f"task roles {rname!r} and another are both role {role!r}", "distinct names")
        if role != rname:
            ctx.comment(("spec", "roles", role), f"OpenPAI task role {rname}")
        for key in ("completion", "resourcePerInstance"):
            if key in body and not isinstance(body[key], dict):
                raise ctx.fail(path + (key,), "is not a mapping", "a mapping")
        if v2 and "commands" in body and not isinstance(body["commands"], list):
            raise ctx.fail(path + ("commands",), "is not a list", "a list of command lines")
        for key in body:
            if v2 and key == "taskRetryCount" and body[key] == 0:
                continue  # no retry of one task: the restartPolicy Never every imported role gets
            if key not in (V2_ROLE_KEYS if v2 else V1_ROLE_KEYS):
                ctx.lose(path + (key,), f"task role {key} has no spec field"
                         + ("; trainspec retries no single task (restartPolicy Never), only the job (backoffLimit)"
                            if key == "taskRetryCount" else ""))
        count = body.get("instances", 1) if v2 else body.get("taskNumber", 1)
        if not isinstance(count, int) or count < 0:
            raise ctx.fail(path + ("instances" if v2 else "taskNumber",), "is not a count", "an integer >= 0")
        out: dict = {}
        image = images.get(str(body.get("dockerImage"))) if v2 else body.get("image", data.get("image"))
        if v2 and str(body.get("dockerImage")) not in images:
            raise ctx.fail(path + ("dockerImage",), f"no dockerimage prerequisite named {body.get('dockerImage')!r}",
                           "the name of a prerequisite of type dockerimage")
        if not isinstance(image, str):
            raise ctx.fail(("image",), "no image", "an image name")
        out["image"] = image
        commands = body.get("commands") if v2 else body.get("command")
        script = "\n".join(str(c) for c in commands) if isinstance(commands, list) else commands
        if isinstance(script, str):
            script = _substitute(ctx, script, data, path + ("commands" if v2 else "command",))
            for var in sorted(set(_PAI_VAR.findall(script)) - set(DIRS.values())):
                ctx.lose(path + ("commands" if v2 else "command",), f"the command reads ${var}, which OpenPAI's "
                         "runtime sets and trainspec does not (use TRAINSPEC_HOSTS_<ROLE>, TRAINSPEC_INDEX)")
            out["command"] = ["sh", "-c", script.replace("{{", "{{ '{{' }}")]
        res = body.get("resourcePerInstance") or {} if v2 else body
        resources = _resources(ctx, res, path + (("resourcePerInstance",) if v2 else ()), v2)
        if resources:
            out["resources"] = resources
        done = (body.get("completion") or {}) if v2 else body
        succeeded = done.get("minSucceededInstances" if v2 else "minSucceededTaskCount")
        failed = done.get("minFailedInstances" if v2 else "minFailedTaskCount")
        if failed not in (None, 1):
            ctx.lose(path, f"the job fails after {failed} failed instances; trainspec fails it on the first")
        if succeeded is not None and succeeded not in (-1,):
            if succeeded == count:
                deciders.append((role, "AllReplicas"))
            elif succeeded == 1:
                deciders.append((role, "AnyReplica"))
            else:
                ctx.lose(path, f"the job succeeds after {succeeded} of {count} instances; the spec says all or any")
        drafts[role] = RoleDraft(body=out)
        replicas[role] = count
    if len(deciders) == 1:
        job["success"] = {"role": deciders[0][0]} | ({"policy": deciders[0][1]} if deciders[0][1] != "AllReplicas"
                                                     else {})
        ctx.uses("success")
    elif len(deciders) > 1:
        ctx.lose(("taskRoles",), "several task roles decide success; the spec names one")
    spec = assemble(ctx, "generic", {"name": meta["name"]}, drafts, {r: "" for r in drafts}, job,
                    {r: "Never" for r in drafts}, replicas)
    if env:
        spec = ordered({**spec, "env": {**env, **spec.get("env", {})}}, SPEC_ORDER)
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": meta, "spec": spec}


def _images(ctx: Context, data: dict) -> dict[str, str]:
    out = {}
    for i, item in enumerate(data.get("prerequisites") or []):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "dockerimage" and isinstance(item.get("uri"), str):
            out[str(item.get("name"))] = item["uri"]
            if item.get("auth"):
                ctx.lose(("prerequisites", i, "auth"), "registry credentials are not written into a spec (use an "
                         "imagePullSecrets Secret)")
        else:
            ctx.lose(("prerequisites", i), f"a {item.get('type')} prerequisite has no spec field")
    return out


def _substitute(ctx: Context, script: str, data: dict, path: tuple) -> str:
    """`<% $parameters.x %>` as OpenPAI fills it in at submission; secrets and other sources are not written."""
    params: dict = data["parameters"] if isinstance(data.get("parameters"), dict) else {}

    def fill(m: re.Match) -> str:
        source, key = m.group(1), m.group(2)
        if source == "parameters" and key in params:
            return str(params[key])
        ctx.lose(path, f"<% ${source}.{key} %> is not written into a spec" + (
            " (secrets stay out of files: use env secretKeyRef)" if source == "secrets" else ""))
        return m.group(0)

    return _MUSTACHE.sub(fill, script)


def _resources(ctx: Context, res: dict, path: tuple, v2: bool) -> dict:
    out: dict = {}
    cpu, mem, gpu = (res.get("cpu"), res.get("memoryMB"), res.get("gpu")) if v2 else \
        (res.get("cpuNumber"), res.get("memoryMB"), res.get("gpuNumber"))
    if isinstance(cpu, (int, float)) and cpu > 0:
        out["cpu"] = str(cpu)
    if isinstance(mem, int) and mem > 0:
        out["memory"] = f"{mem}Mi"
    if isinstance(gpu, int) and gpu > 0:
        out["gpu"] = gpu
    for key in res if v2 else ():
        if key not in ("cpu", "memoryMB", "gpu"):
            ctx.lose(path + (key,), f"resourcePerInstance.{key} has no spec field")
    return out
