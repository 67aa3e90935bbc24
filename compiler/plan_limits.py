"""Limits the cluster (or Linux, or Docker Compose) enforces, checked on the plan before a target renders.

Each check is a pure function of the plan and returns `LimitProblem`s (limits.py, with the numbers): the
number that breaks the limit, the limit, and which target (if any) avoids it.  The planner turns a
target's (its `TargetRules.limits`) into that target's spec errors at the field that causes them
(`JobPlan.check`); `report` adds the target-independent one (Linux's per-string limit) to
validation (`load_plans`), so `validate`, every target and `trainspec run` refuse it.  What one
target's own output may be (its file's size) is estimated here from the plan too (`output_size`).
"""

from .limits import (
    ANNOTATIONS_MAX_BYTES,
    ANNOTATIONS_RESERVE,
    CONFIG_MAP_MAX_BYTES,
    MAX_ARG_STRLEN,
    MAX_OUTPUT_BYTES,
    OUTPUT_POD_BYTES,
    LimitProblem,
    text_bytes,
)


def kubernetes_limits(plan) -> list[LimitProblem]:
    """The limits of a target that writes the whole topology ConfigMap, annotated objects and Kueue's queue
    label (k8s, helm, jobset, trainjob); each target's `TargetRules.limits` composes its own from the
    checks here and its own (targets/<name>/checks.py)."""
    return config_map_size(plan) + annotations_size(plan) + queue_label(plan)


def report(plan, sink) -> None:
    """Add the target-independent problems (Linux's per-string limit) to a validation ErrorSink.

    Called by `load_plans`, so `validate`, every target and `trainspec run` see them."""
    found = exec_string_problems(plan)
    for problem in found:
        path = next((p for p in problem.paths if sink.prefix + p in sink.positions), problem.paths[0])
        sink.add(path, problem.message, problem.expected, problem.hint)


# --- Linux: one argument or environment string ----------------------------------------------------

def _exec_bytes(name: str, value: str) -> int:
    return len(name.encode("utf-8")) + 1 + len(value.encode("utf-8")) + 1  # NAME=value\0


def largest_role(plan):
    return max(plan.roles, key=lambda role: role.count)


def exec_string_problems(plan) -> list[LimitProblem]:
    """Environment strings and arguments over MAX_ARG_STRLEN, for every target."""
    from .plan import resolved_env

    out: list[LimitProblem] = []
    topology: list[tuple[int, str, LimitProblem]] = []  # (most replicas, name, problem)
    seen: set[str] = set()
    total = plan.total_replicas
    for role in plan.roles:
        if not role.replicas:
            continue
        # Topology values are the same for every replica but for the index's digits: the last is the longest.
        last = role.replicas[-1]
        generated = {var.name for var in last.env if var.value is None and (var.topology or var.expand)}
        for name, value in resolved_env(plan, last):
            if name not in generated or name in seen or not isinstance(value, str):
                continue
            size = _exec_bytes(name, value)
            if size > MAX_ARG_STRLEN:
                seen.add(name)
                topology.append(_topology_env_problem(plan, role, last, name, size, total))
        for replica in role.replicas:
            for var in replica.env:
                text = var.value
                if text is not None and len(text) * 4 + len(var.name) + 2 > MAX_ARG_STRLEN and var.name not in seen:
                    size = _exec_bytes(var.name, text)
                    if size > MAX_ARG_STRLEN:
                        seen.add(var.name)
                        out.append(LimitProblem(
                            (("spec", "roles", role.name, "env", var.name), ("spec", "env", var.name)),
                            f"environment variable {var.name} of {replica.name} is {size} bytes "
                            f"(as NAME=value), over Linux's {MAX_ARG_STRLEN} bytes per environment string "
                            "(MAX_ARG_STRLEN): the container could not start (`argument list too long`)",
                            f"at most {MAX_ARG_STRLEN - len(var.name) - 2} bytes of value",
                            "no target avoids this; put large data in a file (a ConfigMap or Secret volume)"))
            for key, words in (("command", replica.command), ("args", replica.args)):
                for i, word in enumerate(words or ()):
                    if len(word) * 4 + 1 > MAX_ARG_STRLEN and f"{key}:{role.name}" not in seen:
                        size = len(word.encode("utf-8")) + 1
                        if size > MAX_ARG_STRLEN:
                            seen.add(f"{key}:{role.name}")
                            out.append(LimitProblem(
                                (("spec", "roles", role.name, key, i), ("spec", key, i)),
                                f"{key}[{i}] of {replica.name} is {size} bytes, over Linux's {MAX_ARG_STRLEN} "
                                "bytes per argument (MAX_ARG_STRLEN): the container could not start",
                                f"at most {MAX_ARG_STRLEN - 1} bytes per argument",
                                "no target avoids this; pass large data in a file"))
    # One error per replica count that is too large: the variable that breaks first, naming the others.
    by_path: dict[tuple, list] = {}
    for _most, name, problem in sorted(topology, key=lambda item: item[0]):
        by_path.setdefault(problem.paths, []).append((name, problem))
    for found in by_path.values():
        name, first = found[0]
        others = [other for other, _ in found[1:]]
        message = first.message + (f" (and so are {', '.join(others)})" if others else "")
        out.insert(0, LimitProblem(first.paths, message, first.expected, first.hint))
    return out


def _topology_env_problem(plan, role, replica, name: str, size: int, total: int) -> tuple[int, str, LimitProblem]:
    hosts_role = next((r for r in plan.roles if name == f"TRAINSPEC_HOSTS_{_env_role(r.name)}"), None)
    if hosts_role is not None:
        grows_with, count, scope = hosts_role, hosts_role.count, f"{hosts_role.name} replicas"
    else:  # TF_CONFIG, the TF cluster, the MPI hostfile: every replica of the job
        grows_with, count, scope = largest_role(plan), total, "replicas in the job"
    most = max(1, count * (MAX_ARG_STRLEN - len(name) - 2) // size)
    if name in ("TF_CONFIG", "TRAINSPEC_TF_CLUSTER"):
        hint = ("no target avoids this: every TensorFlow replica's process gets the whole cluster in TF_CONFIG "
                "(k8s and helm through the topology ConfigMap, kubeflow and volcano from the operator, compose "
                "and `trainspec run` literally); use fewer, larger workers or split the job")
    else:
        hint = ("no target avoids this: every target gives each replica this variable (from the topology "
                "ConfigMap, or literally in compose); use fewer, larger replicas or split the job")
    return most, name, LimitProblem(
        (("spec", "roles", grows_with.name, "replicas"),),
        f"with {count} {scope}, {name} of {replica.name} is {size} bytes (as NAME=value), over Linux's "
        f"{MAX_ARG_STRLEN} bytes per environment string (MAX_ARG_STRLEN): its containers could not start "
        "(`argument list too long`)",
        f"at most about {most} {scope}", hint)


def _env_role(name: str) -> str:
    from .frameworks import env_role

    return env_role(name)


# --- Kubernetes: ConfigMap size and annotations -----------------------------------------------------

def config_map_size(plan, prefix: str | None = None) -> list[LimitProblem]:
    """kube_rules: the topology ConfigMap over 1 MiB: every key (`prefix` None), or those starting with `prefix`."""
    size = sum(len(value.encode("utf-8")) for key, value in plan.topology.items()
               if prefix is None or key.startswith(prefix))
    if size <= CONFIG_MAP_MAX_BYTES:
        return []
    total = plan.total_replicas
    role = largest_role(plan)
    return [LimitProblem(
        (("spec", "roles", role.name, "replicas"),),
        f"with {total} replicas the ConfigMap {plan.topology_name} holds {size} bytes of data, over the "
        f"{CONFIG_MAP_MAX_BYTES} bytes (1 MiB) Kubernetes stores in one ConfigMap",
        f"at most about {max(1, total * CONFIG_MAP_MAX_BYTES // size)} replicas in the job",
        "kubeflow and volcano keep only the host lists in it" if prefix is None else
        "no target avoids this; use fewer, larger replicas or split the job")]


def _user_annotations(plan) -> dict:
    return dict(plan.annotations)


def _annotation_bytes(annotations: dict) -> int:
    return sum(len(k.encode("utf-8")) + len(str(v).encode("utf-8")) for k, v in annotations.items())


def annotations_size(plan) -> list[LimitProblem]:
    """kube_rules annotations-size: the job's annotations and each role's pod annotations, 256 KiB per object."""
    out = []
    for role in plan.roles:  # a pod template's annotations are the podAnnotations (kube_rules: annotations-size)
        pod = _annotation_bytes(role.pod.pod_annotations or {})
        if pod + ANNOTATIONS_RESERVE > ANNOTATIONS_MAX_BYTES:
            out.append(LimitProblem(
                (("spec", "roles", role.name, "podAnnotations"), ("spec", "podAnnotations")),
                f"the {role.name} pods' annotations are {pod} bytes (keys and values); Kubernetes refuses an "
                f"object with more than {ANNOTATIONS_MAX_BYTES} bytes (256 KiB) of annotations",
                f"at most {ANNOTATIONS_MAX_BYTES - ANNOTATIONS_RESERVE} bytes of pod annotations",
                "compose has no such limit; put large data in a ConfigMap"))
    size = _annotation_bytes(_user_annotations(plan))
    if size + ANNOTATIONS_RESERVE <= ANNOTATIONS_MAX_BYTES:
        return out
    return out + [LimitProblem(
        (("metadata", "annotations"),),
        f"the annotations are {size} bytes (keys and values) and trainspec adds up to {ANNOTATIONS_RESERVE} "
        f"of its own; Kubernetes refuses an object with more than {ANNOTATIONS_MAX_BYTES} bytes (256 KiB) "
        "of annotations",
        f"at most {ANNOTATIONS_MAX_BYTES - ANNOTATIONS_RESERVE} bytes of annotations",
        "compose has no such limit; put large data in a ConfigMap")]


# --- the API server's rules on scheduling names (compiler/kube_rules.py: scheduling-names) ---------------

def queue_label(plan) -> list[LimitProblem]:
    """The queue as Kueue's kueue.x-k8s.io/queue-name label: a label value (targets that label their objects)."""
    from .kube_rules import label_value_problem

    queue = plan.scheduling.queue
    if not queue or not label_value_problem(queue):
        return []
    return [LimitProblem(
        (("spec", "scheduling", "queue"),),
        f"the queue {queue!r} becomes Kueue's label kueue.x-k8s.io/queue-name, and a label value "
        f"{label_value_problem(queue)}", "a queue name of at most 63 characters",
        "kubeflow and volcano carry the queue as a field, not a label; or use a shorter LocalQueue name")]


# --- trainspec's own bound on every target's output: estimated before rendering --------------------

def _role_static(plan, role) -> int:
    """One pod template's text that is the role's, not a replica's: containers, hooks, probes, volumes,
    pod settings, resources, and the job's labels and annotations it carries."""
    parts = (role.image, role.working_dir, role.resources, role.volumes, role.init_containers, role.lifecycle,
             role.probes, role.pod, plan.labels, plan.annotations)
    return OUTPUT_POD_BYTES + text_bytes(parts, MAX_OUTPUT_BYTES)


def _replica_text(replica) -> int:
    return text_bytes((replica.command, replica.args, replica.env), MAX_OUTPUT_BYTES)


def output_estimate(plan, per_replica, replica_text=None):
    """(bytes, the role that contributes most) of a target's file: one pod template per replica
    (`per_replica`: Volcano's task per replica; a function of the role where the target decides per role,
    as k8s's ranked workers) or per role, plus the topology once.  `replica_text(role, replica)`: a
    replica's own text as the target writes it, where that is not the plan's per-replica env (k8s takes
    its host lists from the topology ConfigMap, counted once here, not copied into each replica)."""
    if replica_text is None:
        def replica_text(role, replica):
            return _replica_text(replica)
    total = text_bytes(plan.topology, MAX_OUTPUT_BYTES)
    biggest, most = None, -1
    for role in plan.roles:
        if not role.replicas:
            continue
        static = _role_static(plan, role)
        if per_replica(role) if callable(per_replica) else per_replica:
            size = 0
            for replica in role.replicas:
                size += static + replica_text(role, replica)
                if size > MAX_OUTPUT_BYTES:
                    break
        else:
            size = static + max(replica_text(role, role.replicas[0]), replica_text(role, role.replicas[-1]))
        total += size
        if size > most:
            biggest, most = role, size
        if total > MAX_OUTPUT_BYTES:
            break
    return total, biggest


def output_size(plan, target: str, per_replica, replica_text=None) -> list[LimitProblem]:
    """A target's file over MAX_OUTPUT_BYTES, estimated from the plan before anything is rendered: a few
    kilobytes of spec (one long value aliased many times, thousands of replicas) must not make gigabytes."""
    size, role = output_estimate(plan, per_replica, replica_text)
    if size <= MAX_OUTPUT_BYTES or role is None:
        return []
    template = _role_static(plan, role) + (_replica_text(role.replicas[-1]) if replica_text is None
                                           else replica_text(role, role.replicas[-1]))
    each = per_replica(role) if callable(per_replica) else per_replica
    copies = f"{role.count} times (once per replica)" if each else "once"
    return [LimitProblem(
        (("spec", "roles", role.name, "args"), ("spec", "args"), ("spec", "roles", role.name, "command"),
         ("spec", "command"), ("spec", "roles", role.name, "replicas")),
        f"the {target} output would be over the {MAX_OUTPUT_BYTES >> 20} MiB trainspec writes in one compiled "
        f"file: the {role.name} pod template, about {max(1, template >> 10)} KiB, is written {copies}",
        f"at most {MAX_OUTPUT_BYTES >> 20} MiB of output",
        "long values (a YAML alias repeats its anchor's whole text) belong in a file the job reads, a ConfigMap "
        "or the image; use fewer, larger replicas")]
