"""Spec v1.1: bad input for every new field at file:line:column, merging, patches, item 5's fixes."""

from __future__ import annotations

import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.targets import load_plans
from trainspec.targets.compose import render as compose
from trainspec.targets.k8s import render as k8s
from trainspec.targets.kubeflow import render as kubeflow
from trainspec.targets.volcano import render as volcano

from helpers import SPECS, plan_text, run_cli

BASE = """\
apiVersion: trainspec/v1.1
kind: TrainingJob
metadata:
  name: job
spec:
  framework: pytorch
  image: pt:2
  command: [python, train.py]
  roles:
    master:
      replicas: 1
    worker:
      replicas: 2
      resources: {cpu: "4", memory: 8Gi, gpu: 1}
"""

MPI = """\
apiVersion: trainspec/v1.1
kind: TrainingJob
metadata:
  name: job
spec:
  framework: mpi
  image: mpi:1
  command: [mpirun, python, train.py]
  roles:
    launcher:
      replicas: 1
    worker:
      replicas: 2
"""


def job(extra: str, base: str = BASE) -> str:
    """`extra` (YAML lines at spec level, 2-space indented) before `roles:`."""
    return base.replace("  roles:\n", extra + "  roles:\n", 1)


def worker(extra: str, base: str = BASE) -> str:
    """`extra` (YAML lines at role level, 6-space indented) in the worker role."""
    return base.replace("    worker:\n      replicas: 2\n", "    worker:\n      replicas: 2\n" + extra, 1)


def launcher(extra: str) -> str:
    return MPI.replace("    launcher:\n      replicas: 1\n", "    launcher:\n      replicas: 1\n" + extra, 1)


def elastic(body: str) -> str:
    return job(f"  pytorch:\n    elastic: {body}\n").replace("    master:\n      replicas: 1\n", "")


# (id, spec text, needle: where the error points (its first occurrence; "key:" for a key), path, message, hint)
CASES = [
    ("pull-policy", job("  imagePullPolicy: Sometimes\n"), "Sometimes", "spec.imagePullPolicy",
     "'Sometimes' is not allowed", "Always, IfNotPresent, Never"),
    ("pull-policy-case", worker("      imagePullPolicy: ifnotpresent\n"), "ifnotpresent",
     "spec.roles.worker.imagePullPolicy", "not allowed", "did you mean 'IfNotPresent'"),
    ("pull-secrets-string", job("  imagePullSecrets: regcred\n"), "regcred", "spec.imagePullSecrets",
     "is a string", "a list of Secret names"),
    ("pull-secrets-k8s-shape", job("  imagePullSecrets: [{name: regcred}]\n"), "{name: regcred}",
     "spec.imagePullSecrets[0]", "is a mapping", "write just the name: regcred"),
    ("pull-secrets-bad-name", job("  imagePullSecrets: [Reg_Cred]\n"), "Reg_Cred", "spec.imagePullSecrets[0]",
     "'Reg_Cred' is not a valid Secret name", "DNS-1123"),
    ("pull-secrets-role", worker("      imagePullSecrets: [regcred]\n"), "imagePullSecrets:",
     "spec.roles.worker.imagePullSecrets", "is a job-level field", "move it to spec.imagePullSecrets"),
    ("service-account", job("  serviceAccountName: Trainer Account\n"), "Trainer Account",
     "spec.serviceAccountName", "is not a valid name", "DNS-1123"),
    ("node-selector-list", job("  nodeSelector: [gpu]\n"), "nodeSelector:", "spec.nodeSelector", "is a list",
     "mapping"),
    ("node-selector-value", worker("      nodeSelector: {pool: a b}\n"), "a b", "spec.roles.worker.nodeSelector.pool",
     "'a b' is not a valid label value", ""),
    ("tolerations-mapping", job("  tolerations: {key: a}\n"), "tolerations:", "spec.tolerations", "is a mapping",
     "a list of Kubernetes Tolerations"),
    ("toleration-operator", job("  tolerations: [{key: a, operator: Maybe}]\n"), "Maybe",
     "spec.tolerations[0].operator", "'Maybe' is not allowed", "Exists, Equal"),
    ("toleration-effect", job("  tolerations: [{key: a, effect: NoSchedul}]\n"), "NoSchedul}",
     "spec.tolerations[0].effect", "not allowed", "did you mean 'NoSchedule'"),
    ("toleration-no-key", job("  tolerations: [{operator: Equal, value: x}]\n"), "{operator", "spec.tolerations[0]",
     "operator must be Exists when `key` is empty", ""),
    ("toleration-exists-value", job("  tolerations: [{key: a, operator: Exists, value: b}]\n"), "b}",
     "spec.tolerations[0].value", "value must be empty when `operator` is 'Exists'", ""),
    ("toleration-seconds", job("  tolerations: [{key: a, effect: NoSchedule, tolerationSeconds: 30}]\n"), "30",
     "spec.tolerations[0].tolerationSeconds", "effect must be 'NoExecute' when `tolerationSeconds` is set", ""),
    ("toleration-typo", job("  tolerations: [{key: a, tolerationSecond: 30}]\n"), "tolerationSecond:",
     "spec.tolerations[0].tolerationSecond", "unknown field", "did you mean 'tolerationSeconds'"),
    ("affinity-operator", job("  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                              "{nodeSelectorTerms: [{matchExpressions: "
                              "[{key: a, operator: Within, values: [x]}]}]}}}\n"),
     "Within", "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].operator", "'Within' is not allowed", "In, NotIn, Exists"),
    ("affinity-required", job("  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {}}}\n"),
     "requiredDuringSchedulingIgnoredDuringExecution:",
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
     "missing required field 'nodeSelectorTerms'", ""),
    ("affinity-weight", job("  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                            "[{weight: 200, podAffinityTerm: {topologyKey: zone}}]}}\n"), "200",
     "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", "200 is too large",
     "<= 100"),
    ("affinity-in-no-values", job("  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                                  "[{topologyKey: zone, labelSelector: "
                                  "{matchExpressions: [{key: a, operator: In}]}}]}}\n"),
     "{key: a, operator: In}", "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
     ".labelSelector.matchExpressions[0].values", "must be specified when `operator` is 'In' or 'NotIn'", ""),
    ("security-user-string", job('  securityContext: {runAsUser: "1000"}\n'), '"1000"',
     "spec.securityContext.runAsUser", "is a string", "an integer"),
    ("security-caps-string", worker("      securityContext: {capabilities: {drop: ALL}}\n"), "ALL",
     "spec.roles.worker.securityContext.capabilities.drop", "is a string", "a list"),
    ("security-privileged", job('  securityContext: {privileged: "true"}\n'), '"true"',
     "spec.securityContext.privileged", "is a string", "true or false"),
    ("security-seccomp", job("  securityContext: {seccompProfile: {type: Default}}\n"), "Default",
     "spec.securityContext.seccompProfile.type", "'Default' is not allowed", "RuntimeDefault"),
    ("security-pod-field", job("  securityContext: {fsGroup: 1000}\n"), "fsGroup:",
     "spec.securityContext.fsGroup", "unknown field 'fsGroup'", ""),
    ("pod-security-fsgroup", job("  podSecurityContext: {fsGroup: -1}\n"), "-1", "spec.podSecurityContext.fsGroup",
     "-1 is too small", ">= 0"),
    ("pod-security-change-policy", job("  podSecurityContext: {fsGroupChangePolicy: Sometimes}\n"), "Sometimes",
     "spec.podSecurityContext.fsGroupChangePolicy", "not allowed", "OnRootMismatch"),
    ("pod-labels-reserved", job("  podLabels: {trainspec.dev/role: x}\n"), "trainspec.dev/role:",
     "spec.podLabels.trainspec.dev/role", "is set by trainspec", ""),
    ("pod-labels-value", worker("      podLabels: {team: a b}\n"), "a b", "spec.roles.worker.podLabels.team",
     "'a b' is not a valid label value", ""),
    ("pod-annotations-key", job('  podAnnotations: {"bad key!": x}\n'), '"bad key!"',
     "spec.podAnnotations.bad key!", "is not a valid annotation key", ""),
    ("priority-role", worker("      priorityClassName: High_Prio\n"), "High_Prio",
     "spec.roles.worker.priorityClassName", "is not a valid name", "DNS-1123"),
    ("priority-job", job("  priorityClassName: high\n"), "priorityClassName:", "spec.priorityClassName",
     "priorityClassName is a role field", "scheduling.priorityClassName"),
    ("requests-twice", BASE.replace('{cpu: "4", memory: 8Gi, gpu: 1}', '{cpu: "4", requests: {cpu: "2"}}'),
     'cpu: "2"', "spec.roles.worker.resources.requests.cpu", "cpu is set twice", "remove one"),
    ("gpu-twice", BASE.replace('{cpu: "4", memory: 8Gi, gpu: 1}', '{gpu: 1, limits: {nvidia.com/gpu: 2}}'),
     "nvidia.com/gpu:", "spec.roles.worker.resources.limits.nvidia.com/gpu", "is set twice", ""),
    ("request-over-limit", BASE.replace('{cpu: "4", memory: 8Gi, gpu: 1}',
                                        "{requests: {memory: 16Gi}, limits: {memory: 8Gi}}"), "16Gi",
     "spec.roles.worker.resources.requests.memory", "request 16Gi is more than the limit 8Gi", ""),
    ("request-extended", BASE.replace('{cpu: "4", memory: 8Gi, gpu: 1}', "{requests: {rdma/hca: 1}}"), "1}}",
     "spec.roles.worker.resources.requests.rdma/hca", "rdma/hca cannot be overcommitted", "limits.rdma/hca: 1"),
    ("request-quantity", BASE.replace('{cpu: "4", memory: 8Gi, gpu: 1}', "{requests: {cpu: lots}}"), "lots",
     "spec.roles.worker.resources.requests.cpu", "'lots' is not a Kubernetes quantity", ""),
    ("request-name", BASE.replace('{cpu: "4", memory: 8Gi, gpu: 1}', '{requests: {"bad name!": 1}}'),
     '"bad name!"', "spec.roles.worker.resources.requests.bad name!", "is not a container resource name", ""),
    ("role-volume-name", job("  volumes: [{name: data, mountPath: /data, source: {emptyDir: {}}}]\n",
                             worker("      volumes: [{name: data, mountPath: /other, source: {emptyDir: {}}}]\n")),
     "data, mountPath: /other", "spec.roles.worker.volumes[0].name",
     "volume name 'data' is also used by spec.volumes[0]",
     "rename"),
    ("role-volume-shm", BASE.replace("gpu: 1}", "gpu: 1, shm: 1Gi}\n      volumes: [{name: cache, mountPath: "
                                     "/dev/shm, source: {emptyDir: {}}}]"), "/dev/shm",
     "spec.roles.worker.volumes[0].mountPath", "mount path '/dev/shm' is also used by resources.shm", ""),
    ("role-volume-dshm", BASE.replace("gpu: 1}", "gpu: 1, shm: 1Gi}\n      volumes: [{name: dshm, mountPath: "
                                      "/cache, source: {emptyDir: {}}}]"), "dshm",
     "spec.roles.worker.volumes[0].name", "volume name 'dshm' is also used by resources.shm", ""),
    ("mpi-ssh-mount", job("  volumes: [{name: keys, mountPath: /root/.ssh, source: {secret: keys}}]\n", MPI),
     "/root/.ssh", "spec.volumes[0].mountPath", "is also used by the MPI ssh keys", ""),
    ("mpi-hostfile-mount", launcher("      volumes: [{name: etc, mountPath: /etc/mpi, source: {emptyDir: {}}}]\n"),
     "/etc/mpi", "spec.roles.launcher.volumes[0].mountPath", "is also used by the MPI hostfile", ""),
    ("mpi-ssh-volume-name", job("  volumes: [{name: ssh-auth, mountPath: /keys, source: {secret: keys}}]\n", MPI),
     "ssh-auth", "spec.volumes[0].name", "volume name 'ssh-auth' is also used by the MPI ssh keys", ""),
    ("mpi-ssh-path", job("  mpi: {sshAuthMountPath: home/.ssh}\n", MPI), "home/.ssh", "spec.mpi.sshAuthMountPath",
     "'home/.ssh' is not an absolute path", ""),
    ("field-ref-path", job("  env: {NODE_IP: {fieldRef: {fieldPath: status.nodeIP}}}\n"), "status.nodeIP",
     "spec.env.NODE_IP.fieldRef.fieldPath", "'status.nodeIP' is not a downward API field", "status.hostIP"),
    ("field-ref-missing", job("  env: {POD: {fieldRef: {}}}\n"), "fieldRef:", "spec.env.POD.fieldRef",
     "missing required field 'fieldPath'", ""),
    ("resource-field-ref", job("  env: {GPUS: {resourceFieldRef: {resource: limits.gpu}}}\n"), "limits.gpu",
     "spec.env.GPUS.resourceFieldRef.resource", "'limits.gpu' is not allowed", "limits.cpu"),
    ("env-two-refs", job("  env: {X: {fieldRef: {fieldPath: metadata.name}, secretKeyRef: {name: s, key: k}}}\n"),
     "X:", "spec.env.X", "has 2 references", "exactly one of"),
    ("env-value-from", job("  env: {X: {valueFrom: {fieldRef: {fieldPath: metadata.name}}}}\n"), "valueFrom:",
     "spec.env.X.valueFrom", "unknown field 'valueFrom'", "allowed fields: secretKeyRef"),
    ("sidecar-policy", worker("      initContainers: [{name: side, image: b, restartPolicy: OnFailure}]\n"),
     "OnFailure", "spec.roles.worker.initContainers[0].restartPolicy", "'OnFailure' is not allowed", "Always"),
    ("elastic-min-max", elastic("{minReplicas: 4, maxReplicas: 2}"), "2}", "spec.pytorch.elastic.maxReplicas",
     "maxReplicas 2 is less than minReplicas 4", ""),
    ("elastic-backend", elastic("{rdzvBackend: etcd}"), "etcd", "spec.pytorch.elastic.rdzvBackend",
     "'etcd' is not allowed", "c10d"),
    ("elastic-admits", elastic("{minReplicas: 3}"), "3}", "spec.pytorch.elastic.minReplicas",
     "minReplicas 3 does not admit the 2 worker replicas", ""),
    ("elastic-typo", elastic("{maxRestart: 3}"), "maxRestart:", "spec.pytorch.elastic.maxRestart", "unknown field",
     "did you mean 'maxRestarts'"),
    ("master-without-elastic", BASE.replace("    master:\n      replicas: 1\n", ""), "roles:",
     "spec.roles", "a pytorch job needs a 'master' role", "add roles.master"),
    ("patch-helm", job("  patches: {helm: []}\n"), "helm:", "spec.patches.helm", "the helm chart takes no patches",
     "patches.k8s"),
    ("patch-not-list", job("  patches: {k8s: {op: add}}\n"), "k8s:", "spec.patches.k8s", "is a mapping",
     "a list of JSON-patch operations"),
    ("patch-op", job("  patches: {kubeflow: [{op: upsert, path: /a, value: 1}]}\n"), "upsert",
     "spec.patches.kubeflow[0].op", "'upsert' is not allowed", "add, remove, replace"),
    ("patch-pointer", job("  patches: {kubeflow: [{op: add, path: spec/x, value: 1}]}\n"), "spec/x",
     "spec.patches.kubeflow[0].path", "'spec/x' is not a JSON pointer", "a path starting with /"),
    ("patch-value", job("  patches: {kubeflow: [{op: add, path: /spec/x}]}\n"), "{op: add",
     "spec.patches.kubeflow[0]", "missing required field 'value'", ""),
    ("patch-from", job("  patches: {kubeflow: [{op: move, path: /spec/x}]}\n"), "{op: move",
     "spec.patches.kubeflow[0]", "missing required field 'from'", ""),
    ("patch-target", job("  patches: {openshift: []}\n"), "openshift:", "spec.patches.openshift",
     "unknown field 'openshift'", ""),
    ("patch-role", worker("      patches: {k8s: []}\n"), "patches:", "spec.roles.worker.patches",
     "is a job-level field", ""),
    ("api-version", BASE.replace("trainspec/v1.1", "trainspec/v2"), "trainspec/v2", "apiVersion",
     "'trainspec/v2' is not supported", "'trainspec/v1' or 'trainspec/v1.1'"),
]


def position(text: str, needle: str) -> tuple[int, int]:
    offset = text.index(needle)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_v11_field_reports_position_path_and_expectation(tmp_path, case):
    name, text, needle, path, message, expected = case
    spec = tmp_path / "job.yaml"
    spec.write_text(text)
    with pytest.raises(SpecErrors) as info:
        load_plans(str(spec))
    matching = [e for e in info.value.errors if e.path == path and message in e.message]
    assert matching, f"no error at {path!r} with {message!r}; got:\n{info.value}"
    error = matching[0]
    line, column = position(text, needle.rstrip(":\n") if needle.endswith(":") else needle)
    assert (error.line, error.column) == (line, column), str(info.value)
    if expected:
        assert expected in error.format()


def test_every_new_field_has_a_case():
    fields = ("imagePullPolicy", "imagePullSecrets", "serviceAccountName", "nodeSelector", "tolerations", "affinity",
              "securityContext", "podSecurityContext", "podLabels", "podAnnotations", "priorityClassName",
              "requests", "limits", "volumes", "fieldRef", "resourceFieldRef", "restartPolicy", "elastic",
              "sshAuthMountPath", "patches")
    text = "\n".join(c[1] + c[3] for c in CASES)
    assert all(f in text for f in fields), [f for f in fields if f not in text]


def _errors(text: str) -> list[str]:
    with pytest.raises(SpecErrors) as info:
        plan_text(text)
    return [e.format() for e in info.value.errors]


def test_env_field_ref_in_a_v1_world_is_one_clear_error(tmp_path):
    """Item 5: an unknown reference kind is one error, not four with misleading 'missing' ones."""
    errors = _errors(job("  env: {X: {fieldRefs: {fieldPath: status.podIP}}}\n"))
    assert len(errors) == 1, errors
    assert "did you mean 'fieldRef'" in errors[0]


def test_mxnet_block_hint_is_not_empty(tmp_path):
    text = BASE.replace("framework: pytorch", "framework: mxnet").replace(
        "    master:\n      replicas: 1\n", "    scheduler: {replicas: 1}\n    server: {replicas: 1}\n")
    errors = _errors(job("  mxnet: {jobMode: MXTrain}\n", text))
    assert len(errors) == 1, errors
    assert "allowed fields: ;" not in errors[0] and "this block takes no fields" in errors[0]


def test_replica_typo_reports_the_cause_only(tmp_path):
    text = BASE.replace("framework: pytorch", "framework: mxnet").replace(
        "    master:\n      replicas: 1\n", "    scheduler: {replicas: 1}\n    server: {replica: 2}\n")
    errors = _errors(text)
    assert len(errors) == 1, errors
    assert "unknown field 'replica'" in errors[0] and "did you mean 'replicas'" in errors[0]
    missing = _errors(text.replace("    server: {replica: 2}\n", ""))
    assert any("an mxnet job needs a 'server' role" in e for e in missing), missing


def test_a_broken_role_does_not_cascade_into_topology_errors(tmp_path):
    text = BASE.replace("framework: pytorch", "framework: tensorflow").replace(
        "    master:\n      replicas: 1\n", "    ps:\n      replicas: 1\n").replace("replicas: 2", "replica: 2")
    errors = _errors(text)
    assert len(errors) == 1 and "did you mean 'replicas'" in errors[0], errors


def test_v11_fields_under_v1_are_accepted(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text(job("  imagePullPolicy: Always\n").replace("trainspec/v1.1", "trainspec/v1"))
    (plan,) = load_plans(str(spec))
    assert all(role.pod.image_pull_policy == "Always" for role in plan.roles)


def _plan(text: str):
    (plan,) = plan_text(text)
    return plan


def _pods(plan, target: str) -> dict[str, dict]:
    """role -> its pod spec (with metadata) in a target's output."""
    text = {"k8s": k8s, "kubeflow": kubeflow, "volcano": volcano}[target].render(plan)
    docs = list(yaml.safe_load_all(next(iter(text.values()))))
    out = {}
    for doc in docs:
        if target == "k8s" and doc["kind"] in ("Job", "Deployment"):
            out.setdefault(doc["spec"]["template"]["metadata"]["labels"]["trainspec.dev/role"],
                           doc["spec"]["template"])
        elif target == "kubeflow" and doc["kind"] == "PyTorchJob":
            for rt, spec in doc["spec"]["pytorchReplicaSpecs"].items():
                out[rt.lower()] = spec["template"]
        elif target == "volcano" and doc["kind"] == "Job":
            for task in doc["spec"]["tasks"]:  # `<role>-<i>` when the target writes a task per replica
                base, _, index = task["name"].rpartition("-")
                out.setdefault(base if index.isdigit() else task["name"], task["template"])
    return out


@pytest.mark.parametrize("target", ["k8s", "kubeflow", "volcano"])
def test_role_values_override_the_job_defaults(tmp_path, target):
    text = job("  nodeSelector: {pool: gpu, zone: a}\n"
               "  tolerations: [{key: gpu, operator: Exists}]\n"
               "  securityContext: {runAsNonRoot: true, capabilities: {drop: [ALL]}}\n"
               "  podLabels: {team: ml}\n"
               "  scheduling: {priorityClassName: normal}\n",
               worker("      nodeSelector: {zone: b}\n"
                      "      tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]\n"
                      "      securityContext: {capabilities: {add: [NET_ADMIN]}}\n"
                      "      priorityClassName: high\n"
                      "      imagePullPolicy: Never\n"))
    pods = _pods(_plan(text), target)
    master, work = pods["master"], pods["worker"]
    assert master["spec"]["nodeSelector"] == {"pool": "gpu", "zone": "a"}
    assert work["spec"]["nodeSelector"] == {"pool": "gpu", "zone": "b"}  # maps merge per key
    assert work["spec"]["tolerations"] == [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]  # replaced
    assert work["spec"]["containers"][0]["securityContext"] == {
        "runAsNonRoot": True, "capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]}}
    assert (master["spec"]["priorityClassName"], work["spec"]["priorityClassName"]) == ("normal", "high")
    assert work["spec"]["containers"][0]["imagePullPolicy"] == "Never"
    assert "imagePullPolicy" not in master["spec"]["containers"][0]
    assert master["metadata"]["labels"]["team"] == "ml"


def test_kubeflow_patch_is_applied_and_still_valid(tmp_path):
    from schemas import errors as crd_errors

    text = job("  patches:\n    kubeflow:\n      - {op: add, path: /spec/runPolicy/suspend, value: true}\n"
               "      - {op: replace, path: /spec/pytorchReplicaSpecs/Worker/replicas, value: 4}\n")
    plan = _plan(text)
    docs = list(yaml.safe_load_all(kubeflow.render(plan)[kubeflow.FILE]))
    assert docs[-1]["spec"]["runPolicy"]["suspend"] is True
    assert docs[-1]["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 4
    assert crd_errors(docs[-1]) == []
    assert "suspend" not in k8s.render(plan)[k8s.FILE]  # other targets are untouched


def test_k8s_patch_addresses_the_file_and_compose_the_document(tmp_path):
    import kubernetes_validate

    text = job("  patches:\n    k8s:\n      - {op: add, path: /2/spec/template/spec/hostNetwork, value: true}\n"
               "    compose:\n      - {op: add, path: /services/master-0/init, value: true}\n")
    plan = _plan(text)
    docs = list(yaml.safe_load_all(k8s.render(plan)[k8s.FILE]))
    assert docs[2]["kind"] == "Job" and docs[2]["spec"]["template"]["spec"]["hostNetwork"] is True
    for doc in docs:
        kubernetes_validate.validate(doc, "1.31", strict=True)
    doc = yaml.safe_load(compose.render(plan)[compose.FILE])
    assert doc["services"]["master-0"]["init"] is True


def test_a_patch_that_does_not_apply_is_an_error_at_its_op(tmp_path):
    text = job("  patches:\n    kubeflow:\n      - {op: add, path: /spec/runPolicy/suspend, value: true}\n"
               "      - {op: replace, path: /spec/nothing/here, value: 1}\n")
    spec = tmp_path / "job.yaml"
    spec.write_text(text)
    result = run_cli("compile", str(spec), "--target", "kubeflow")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line, column = position(text, "{op: replace")
    assert f"job.yaml:{line}:{column}: spec.patches.kubeflow[1]: target kubeflow: patch op " \
           f"'replace /spec/nothing/here' does not apply" in result.stderr, result.stderr
    assert result.stdout == ""
    result = run_cli("validate", str(spec))
    assert result.returncode == 2 and f"job.yaml:{line}:{column}: spec.patches.kubeflow[1]" in result.stderr


def test_mpi_worker_default_command_only_when_command_and_args_are_unset(tmp_path):
    plan = _plan(MPI.replace("    worker:\n      replicas: 2\n",
                                       "    worker:\n      replicas: 2\n      args: [-D]\n"))
    assert plan.role("worker").replicas[0].command is None  # the image's entry point, as mpi-operator does
    assert plan.role("worker").replicas[0].args == ("-D",)
    plan = _plan(MPI)
    assert plan.role("worker").replicas[0].command == ("/usr/sbin/sshd", "-De")


def test_ssh_auth_mount_path_reaches_every_target(tmp_path):
    plan = _plan(job("  mpi: {sshAuthMountPath: /home/mpiuser/.ssh}\n", MPI))
    text = {t: next(iter(m.render(plan).values())) for t, m in
            (("k8s", k8s), ("kubeflow", kubeflow), ("volcano", volcano), ("compose", compose))}
    assert "mountPath: /home/mpiuser/.ssh" in text["k8s"]
    assert "sshAuthMountPath: /home/mpiuser/.ssh" in text["kubeflow"]
    assert "--ssh-key-file-path=/home/mpiuser/.ssh" in text["volcano"]
    assert "target: /home/mpiuser/.ssh" in text["compose"]
    assert "/root/.ssh" not in "".join(text.values())


def test_elastic_pytorch_env_and_policy(tmp_path):
    plan = _plan(elastic("{minReplicas: 1, maxReplicas: 4, rdzvPort: 29400, maxRestarts: 2}"))
    env = {v.name: v.value for v in plan.role("worker").replicas[1].env}
    assert env["PET_RDZV_ENDPOINT"] == "job-worker-0:29400"
    assert (env["PET_RDZV_BACKEND"], env["PET_NNODES"], env["PET_MAX_RESTARTS"]) == ("c10d", "1:4", "2")
    assert "MASTER_ADDR" not in env and "WORLD_SIZE" not in env
    assert plan.success.text == "all workers succeed"
    job_doc = list(yaml.safe_load_all(kubeflow.render(plan)[kubeflow.FILE]))[-1]
    assert job_doc["spec"]["elasticPolicy"] == {"minReplicas": 1, "maxReplicas": 4, "rdzvBackend": "c10d",
                                               "rdzvPort": 29400, "maxRestarts": 2}
    assert "Master" not in job_doc["spec"]["pytorchReplicaSpecs"]
    vc = list(yaml.safe_load_all(volcano.render(plan)[volcano.FILE]))[-1]
    assert "pytorch" not in vc["spec"]["plugins"]  # the plugin needs a master task
    vc_env = {e["name"]: e.get("value") for e in vc["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"]}
    assert vc_env["PET_RDZV_ENDPOINT"] == "job-worker-0.job:29400"


def test_compose_warns_once_about_what_it_drops(tmp_path):
    result = run_cli("compile", str(SPECS / "pytorch-cluster.yaml"), "--target", "compose")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("warning") == 1, result.stderr
    for field in ("nodeSelector", "tolerations", "affinity", "imagePullSecrets", "serviceAccountName"):
        assert field in result.stderr
    doc = yaml.safe_load(result.stdout)
    master = doc["services"]["master-0"]
    assert master["pull_policy"] == "if_not_present" and master["user"] == "1000:1000"
    assert master["cap_drop"] == ["ALL"] and master["security_opt"] == ["no-new-privileges:true"]
    assert master["labels"]["cost-center"] == "cv-research"
    assert master["deploy"]["resources"]["reservations"]["cpus"] == "32"
    sidecar = doc["services"]["worker-0-init-log-shipper"]
    assert sidecar["restart"] == "always"
    assert doc["services"]["worker-0"]["depends_on"]["worker-0-init-log-shipper"] == {"condition": "service_started"}
