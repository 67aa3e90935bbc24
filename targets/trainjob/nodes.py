"""Trainer v2's one `node` template (torch, xgboost): the master and the workers are its pods, so they must
be configured alike and render the same text.  The trainjob target's checks and its v1.3 checks on a
cluster's runtime (on_runtime.py) both report what differs."""

from trainspec.compiler.plan import JobPlan, Rendered, RolePlan
from trainspec.compiler.target_rules import Problem

from ..shared_checks import env_path
from .runtimes import NODE_FRAMEWORKS
from .scheme import scheme_for

JOB_LEVEL = ("image", "workingDir", "restartPolicy", "volumes")  # node settings the spec also has job-wide
JOB_LEVEL_HINT = "set it at the job level"
SAME_HINT = "give the master and workers the same {}"


def one_node_template(plan: JobPlan) -> str:
    return (f"Trainer v2 runs the {NODE_FRAMEWORKS.get(plan.framework, plan.framework)} master and workers from "
            "one pod template (its `node` Job)")


def _node_settings(role: RolePlan) -> dict:
    """The role's pod settings one shared `node` template must agree on (torch), by spec key."""
    return {"image": role.image, "workingDir": role.working_dir, "restartPolicy": role.restart_policy,
            "resources": role.resources, "volumes": role.volumes, "initContainers": role.init_containers,
            "lifecycle": role.lifecycle, "probes": role.probes,
            # spec v1.1's pod settings (the job's with the role's over them)
            "imagePullPolicy": role.pod.image_pull_policy, "serviceAccountName": role.pod.service_account_name,
            "nodeSelector": role.pod.node_selector, "tolerations": role.pod.tolerations,
            "affinity": role.pod.affinity, "securityContext": role.pod.security_context,
            "podSecurityContext": role.pod.pod_security_context, "podLabels": role.pod.pod_labels,
            "podAnnotations": role.pod.pod_annotations, "priorityClassName": role.pod.priority_class_name}


def _text_difference(role: RolePlan, a: Rendered, b: Rendered) -> tuple[str, tuple] | None:
    """(field, spec path in `role`) of the first command / args item or env var where `a` and `b` differ."""
    for key in ("command", "args"):
        items_a, items_b, sources = getattr(a, key), getattr(b, key), getattr(role.sources, key)
        if items_a != items_b:
            i = next((i for i, (x, y) in enumerate(zip(items_a or (), items_b or ())) if x != y), 0)
            return key, sources[i].path if sources and i < len(sources) else ("spec", "roles", role.name, key)
    if a.env != b.env:
        differing = [y for x, y in zip(a.env, b.env) if x != y] + list(b.env[len(a.env):]) + list(a.env[len(b.env):])
        return "env", env_path(role, differing[0].name)
    return None


def shared_nodes(plan: JobPlan) -> list[Problem]:
    master, worker = plan.role("master"), plan.role("worker")
    if master is None or worker is None or not worker.count:
        return []
    out = []
    ours, theirs = _node_settings(master), _node_settings(worker)
    for key in ours:
        if ours[key] != theirs[key]:
            path = worker.restart_path if key == "restartPolicy" else ("spec", "roles", "worker", key)
            out.append(Problem(path, f"target trainjob: {one_node_template(plan)}, but their {key} differ",
                               "the same settings for master and worker",
                               f"{JOB_LEVEL_HINT if key in JOB_LEVEL else SAME_HINT.format(key)}, or use the jobset "
                               "or kubeflow target", True))
    scheme = scheme_for(plan.framework).name
    m, w = master.renders.get(scheme), worker.renders.get(scheme)
    if m is not None and w is not None:
        found = _text_difference(worker, m.of(0), w.of(0))
        if found is None and not w.uniform:
            found = _text_difference(worker, w.of(0), w.of(1))
        if found is not None:
            key, path = found
            out.append(Problem(path, f"target trainjob: {one_node_template(plan)}, but their {key} render differently "
                                     "(a {{ role }} or {{ index }} template, or a per-role value)",
                               "the same text for master and worker", "use the jobset or kubeflow target", True))
    return out
