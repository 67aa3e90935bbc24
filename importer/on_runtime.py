"""`migrate MANIFEST --to trainjob --runtime FILE`: the job as a TrainJob on a runtime the cluster has
(spec v1.3 `spec.trainjob`), and what the runtime changes, computed from the runtime itself.

The imported spec names the runtime (the one given, or among several the one whose ML policy is the
job's framework).  What a TrainJob's `trainer` cannot carry (volumes, workingDir, shm, restart
settings...) is taken out and reported as lost, each at its field (under --strict: refused); say it in
`spec.trainjob.runtimePatches` or in the runtime.  The changes are what the Trainer controller then
does differently from the source's operator: the variables the runtime's ML policy injects instead
(compiler/runtimes.py `expand`, as the controller computes them), the container the runtime names
`node`, the nodes' host names, and what the runtime's template brings of its own.
"""

from __future__ import annotations

import copy

from trainspec.compiler.errors import SpecError, SpecErrors, UsageError
from trainspec.compiler.kinds.trainjob import TRAINJOB
from trainspec.compiler.runtimes import Runtime, expand, load_runtimes

# what each source operator injected (kubeflow/training-operator pkg/controller.v1/*/envvar.go)
OPERATOR_ENV = {
    "pytorch": "MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE (and PET_* with nprocPerNode/elastic)",
    "xgboost": "MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, WORKER_PORT, WORKER_ADDRS",
    "jax": "COORDINATOR_ADDRESS, COORDINATOR_PORT, NUM_PROCESSES, PROCESS_ID",
    "mpi": "OMPI_MCA_* and the hostfile of the mpi-operator",
}
POLICY = {"pytorch": "torch", "xgboost": "xgboost", "jax": "jax", "mpi": "mpi"}
MAX_ROUNDS = 64  # each round removes one field the TrainJob cannot carry


def choose(runtimes: tuple[Runtime, ...], framework: str) -> Runtime:
    if len(runtimes) == 1:
        return runtimes[0]
    policy = POLICY.get(framework)
    fitting = [r for r in runtimes if policy in ((r.data.get("spec") or {}).get("mlPolicy") or {})]
    if len(fitting) == 1:
        return fitting[0]
    names = ", ".join(f"{r.kind} {r.name}" for r in (fitting or runtimes)) or "none"
    raise UsageError(f"--runtime: {len(fitting or runtimes)} runtimes fit a {framework} job ({names})",
                     hint="give the one the TrainJob should name with --runtime FILE")


def _drop(spec: dict, path: tuple) -> bool:
    """Remove the field at `path` (a Problem's path; shm lives under resources, a role's may be the job's);
    True when removed."""
    candidates = [path]
    if path and path[-1] == "shm":
        candidates.append(path[:-1] + ("resources", "shm"))
    if len(path) > 3 and path[:2] == ("spec", "roles"):  # a job-level field the plan gave every role
        candidates += [("spec",) + c[3:] for c in list(candidates)]
    for candidate in candidates:
        node: object = spec
        for key in candidate[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and candidate[-1] in node:
            del node[candidate[-1]]
            return True
    return False


def on_runtime(spec: dict, runtimes_given: list[str], source: str, compile_text) -> tuple[dict, str, list[SpecError],
                                                                                           list[str], dict[str, str]]:
    """(spec on the runtime, its text, losses, changes, compiled files)."""
    import yaml

    runtimes = load_runtimes(runtimes_given)
    if not runtimes:
        raise UsageError("--runtime: no TrainingRuntime or ClusterTrainingRuntime in the files given")
    framework = str(spec["spec"].get("framework"))
    runtime = choose(runtimes, framework)
    spec = copy.deepcopy(spec)
    spec["apiVersion"] = "trainspec/v1.3"
    spec["spec"]["trainjob"] = {"runtime": {"name": runtime.name, "kind": runtime.kind}}
    spec["spec"].pop("patches", None)  # they address the source's object
    lost: list[SpecError] = []
    for _ in range(MAX_ROUNDS):
        text = yaml.safe_dump(spec, sort_keys=False)
        try:
            files = compile_text(text, "trainjob", f"{source} (imported)")
            break
        except SpecErrors as errors:
            dropped = False
            for e in errors.errors:
                path = tuple(int(p) if p.isdigit() else p for p in e.path.split("."))
                if _drop(spec, path):
                    lost.append(SpecError(source, 1, 1, e.path, f"on {runtime.kind} {runtime.name}: {e.message}",
                                          "", "say it in spec.trainjob.runtimePatches, or in the runtime"))
                    dropped = True
                    break
            if not dropped:
                raise
    else:
        raise UsageError(f"{source}: too many fields a {TRAINJOB.kind} on {runtime.name} cannot carry")
    trainjob = next(d for t in files.values() for d in yaml.safe_load_all(t) if isinstance(d, dict)
                    and d.get("kind") == TRAINJOB.kind)
    return spec, text, lost, changes(trainjob, runtime, framework, spec), files


def changes(trainjob: dict, runtime: Runtime, framework: str, spec: dict) -> list[str]:
    """What the runtime does differently from the source's operator, from the JobSet the controller makes."""
    made = expand(trainjob, runtime.data)
    name = trainjob["metadata"]["name"]
    trainer = trainjob["spec"].get("trainer") or {}
    rjobs = made.jobset["spec"]["replicatedJobs"]
    node = next(c for r in rjobs for c in r["template"]["spec"]["template"]["spec"]["containers"]
                if c["name"] == "node" and c.get("image") == trainer.get("image", c.get("image")))
    own = {e["name"] for e in trainer.get("env") or []}
    runtime_node: dict = next((c for r in runtime.data["spec"]["template"]["spec"]["replicatedJobs"]
                               for c in r["template"]["spec"]["template"]["spec"]["containers"]
                               if c.get("name") == "node"), {})
    runtime_env = {e["name"] for e in runtime_node.get("env") or []}
    injected = [e for e in node.get("env") or [] if e["name"] not in own and e["name"] not in runtime_env]
    shown = ", ".join(f"{e['name']}={e['value']}" if "value" in e else f"{e['name']} (the Job completion index)"
                      for e in injected)
    where = f"{runtime.kind} {runtime.name}"
    out = [f"env: the source's operator set {OPERATOR_ENV.get(framework, 'its own variables')}; on {where} "
           f"Trainer sets {shown or 'no variables'} instead"]
    command = trainer.get("command") or []
    if framework == "pytorch" and (not command or "torchrun" not in str(command[0])):
        out.append("entry: the command is not torchrun: torchrun reads PET_*; a script that reads MASTER_ADDR, "
                   "RANK or WORLD_SIZE itself gets none of them on this runtime")
    elif framework == "pytorch":
        out.append("entry: torchrun reads PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR/PORT: "
                   "MASTER_ADDR, RANK and WORLD_SIZE inside the script are torchrun's, not the operator's")
    nodes = trainer.get("numNodes")
    out.append(f"container: the trainer runs in the runtime's container `node` (the source's name is not kept); "
               f"the roles become {nodes if nodes is not None else 'the runtime’s'} nodes of one Job `node`, "
               f"hosts {name}-node-0-<i>.{name}, node 0 the master")
    extra = sorted(runtime_env - own)
    pod = rjobs[0]["template"]["spec"]["template"]["spec"]
    if extra or pod.get("volumes") or pod.get("initContainers"):
        brought = ([f"env {', '.join(extra)}"] if extra else []) + \
            ([f"volumes {', '.join(v['name'] for v in pod['volumes'])}"] if pod.get("volumes") else []) + \
            ([f"init containers {', '.join(c['name'] for c in pod['initContainers'])}"]
             if pod.get("initContainers") else [])
        out.append(f"runtime: {where}'s template brings {'; '.join(brought)}")
    if made.mpi:
        out.append(f"mpi: the hostfile is the ConfigMap {name}-mpi-hostfile at /etc/mpi/hostfile, the ssh key the "
                   f"Secret {name}-mpi-ssh-auth (the controller makes both)")
    return out
