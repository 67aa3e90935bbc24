"""`ps --cluster`: a job's replica table from its object (spec and status) and its pods, per target.

The job objects are the golden compiled files; the statuses are written in each operator's
status shape and checked against that CRD's own status schema (reference/crds), so a fixture
that does not match what the operator writes fails here; the pods carry the labels each
controller sets (reference CONVENTIONS.md / CONVENTIONS-V2.md).
"""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from trainspec.cluster.status import as_json, expected_replicas, job_phase, job_state, parse_time, table

from helpers import GOLDEN, reference_dir

NOW = parse_time("2026-11-26T03:00:00Z") or 0.0


def golden(job: str, target: str, kinds: tuple[str, ...]) -> list[dict]:
    docs = yaml.safe_load_all((GOLDEN / job / f"{target}.yaml").read_text())
    return [d for d in docs if d and d["kind"] in kinds]


def status_schema(crd_file: str, version: str) -> dict:
    crd = yaml.load((reference_dir() / "crds" / crd_file).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    (ver,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    return ver["schema"]["openAPIV3Schema"]["properties"]["status"]


def with_status(obj: dict, status: dict, crd_file: str, version: str) -> dict:
    jsonschema.validate(status, status_schema(crd_file, version))  # the operator's own status shape
    return dict(obj, status=status)


def pod(name: str, labels: dict, *, phase: str = "Running", restarts: int = 0, node: str = "node-a",
        started: str = "2026-11-26T02:58:00Z", state: dict | None = None, last: dict | None = None,
        annotations: dict | None = None, created: str = "2026-11-26T02:57:50Z") -> dict:
    status: dict = {"phase": phase, "startTime": started, "containerStatuses": [{
        "name": "main", "restartCount": restarts, "ready": phase == "Running", "image": "x", "imageID": "",
        "state": state or ({"running": {"startedAt": started}} if phase == "Running" else {}),
        "lastState": last or {}}]}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "labels": labels, "annotations": annotations or {},
                         "creationTimestamp": created},
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "x"}]}, "status": status}


def rows(state) -> list[tuple]:
    return [(r.name, r.phase, r.restarts, r.exit_code, r.node, r.reason) for r in state.replicas]


def test_a_kubeflow_tfjob_from_its_replica_statuses_and_pods():
    (tfjob,) = golden("tf-ps", "kubeflow", ("TFJob",))
    tfjob = with_status(tfjob, {
        "conditions": [
            {"type": "Created", "status": "True", "reason": "TFJobCreated", "message": "created",
             "lastTransitionTime": "2026-11-26T02:57:40Z", "lastUpdateTime": "2026-11-26T02:57:40Z"},
            {"type": "Running", "status": "True", "reason": "TFJobRunning", "message": "TFJob ml/tf-ps is running.",
             "lastTransitionTime": "2026-11-26T02:58:10Z", "lastUpdateTime": "2026-11-26T02:58:10Z"}],
        "replicaStatuses": {"PS": {"active": 2}, "Worker": {"active": 2, "failed": 1}, "Evaluator": {}},
        "startTime": "2026-11-26T02:57:40Z"}, "kubeflow/kubeflow.org_tfjobs.yaml", "v1")
    base = {"trainspec.dev/job": "tf-ps", "training.kubeflow.org/job-name": "tf-ps"}

    def kf(role: str, i: int) -> dict:
        return dict(base, **{"trainspec.dev/role": role, "training.kubeflow.org/replica-type": role,
                             "training.kubeflow.org/replica-index": str(i)})

    pods = [pod("tf-ps-ps-0", kf("ps", 0)), pod("tf-ps-ps-1", kf("ps", 1), node="node-b"),
            pod("tf-ps-worker-0", kf("worker", 0), restarts=2,
                last={"terminated": {"exitCode": 137, "reason": "OOMKilled"}}),
            pod("tf-ps-worker-1", kf("worker", 1), phase="Failed",
                state={"terminated": {"exitCode": 3, "reason": "Error"}})]
    state = job_state("tf-ps", [tfjob], pods, NOW)
    assert (state.kind, state.phase, state.message) == ("TFJob", "Running", "TFJob ml/tf-ps is running.")
    assert rows(state) == [
        ("ps-0", "Running", 0, None, "node-a", ""), ("ps-1", "Running", 0, None, "node-b", ""),
        ("worker-0", "Running", 2, 137, "node-a", "OOMKilled"), ("worker-1", "Failed", 0, 3, "node-a", "Error"),
        ("worker-2", "-", 0, None, "", "no pod"), ("evaluator-0", "-", 0, None, "", "no pod")]
    assert state.replicas[0].age == 120.0
    text = table(state)
    assert text.splitlines()[0] == "job tf-ps  TFJob tf-ps  Running  (TFJob ml/tf-ps is running.)"
    assert text.splitlines()[1].split() == ["REPLICA", "ROLE", "INDEX", "STATUS", "READY", "RESTARTS", "EXIT", "NODE",
                                           "AGE", "DETAIL"]
    assert text.splitlines()[4].split() == ["worker-0", "worker", "0", "Running", "yes", "2", "137", "node-a", "2m00s",
                                           "OOMKilled"]
    assert json.loads(json.dumps(as_json(state)))["replicas"][3]["exit_code"] == 3


def test_a_job_the_server_stored_with_no_operator_says_so():
    data = json.loads((reference_dir() / "apiserver" / "get-tfjob-no-controller.json").read_text())
    tfjob = data["response"]["body"]
    phase, message = job_phase(tfjob)
    assert phase == "Pending" and "operator" in message
    state = job_state("tf-ps", [tfjob], [], NOW)
    # the server stores the replica-spec map with its keys sorted: the rows follow the stored object
    assert [r.name for r in state.replicas] == ["evaluator-0", "ps-0", "ps-1", "worker-0", "worker-1", "worker-2"]
    assert {r.reason for r in state.replicas} == {"no pod"}


def test_an_mpijob_launcher_and_workers():
    (mpijob,) = golden("mpi-horovod", "kubeflow", ("MPIJob",))
    mpijob = with_status(mpijob, {
        "conditions": [{"type": "Succeeded", "status": "True", "reason": "MPIJobSucceeded", "message": "done",
                        "lastTransitionTime": "2026-11-26T02:59:00Z"}],
        "replicaStatuses": {"Launcher": {"succeeded": 1}, "Worker": {}}},
        "kubeflow/kubeflow.org_mpijobs_v2beta1.yaml", "v2beta1")
    assert expected_replicas(mpijob)[0][0] == "launcher"
    launcher = pod("mpi-horovod-launcher", {"trainspec.dev/job": "mpi-horovod",
                                            "training.kubeflow.org/replica-type": "launcher"},
                   phase="Succeeded", state={"terminated": {"exitCode": 0, "reason": "Completed"}})
    state = job_state("mpi-horovod", [mpijob], [launcher], NOW)
    assert state.phase == "Succeeded"
    assert rows(state)[0] == ("launcher-0", "Succeeded", 0, 0, "node-a", "Completed")


def test_a_volcano_job_from_its_state_and_task_labels():
    (vcjob,) = golden("tf-ps", "volcano", ("Job",))
    vcjob = with_status(vcjob, {"state": {"phase": "Running", "lastTransitionTime": "2026-11-26T02:58:00Z"},
                                "running": 5, "minAvailable": 6, "version": 1},
                        "volcano/batch.volcano.sh_jobs.yaml", "v1alpha1")
    pods = [pod(f"tf-ps-worker-{i}", {"volcano.sh/job-name": "tf-ps", "volcano.sh/task-spec": "worker",
                                      "volcano.sh/task-index": str(i), "trainspec.dev/job": "tf-ps",
                                      "trainspec.dev/role": "worker"}) for i in range(3)]
    state = job_state("tf-ps", [vcjob], pods, NOW)
    assert state.phase == "Running"
    assert [(r.name, r.phase) for r in state.replicas if r.role == "worker"] == \
        [("worker-0", "Running"), ("worker-1", "Running"), ("worker-2", "Running")]
    assert len(state.replicas) == 6


def test_a_jobset_reads_job_and_completion_indexes():
    (jobset,) = golden("pytorch-ddp", "jobset", ("JobSet",))
    jobset = with_status(jobset, {
        "conditions": [{"type": "Completed", "status": "True", "reason": "AllJobsCompleted", "message": "jobset completed successfully",
                        "lastTransitionTime": "2026-11-26T02:59:30Z"}],
        "replicatedJobsStatus": [{"name": "master", "ready": 0, "succeeded": 1, "failed": 0, "active": 0, "suspended": 0},
                                 {"name": "worker", "ready": 0, "succeeded": 1, "failed": 0, "active": 0, "suspended": 0}],
        "restarts": 0}, "jobset/jobset.x-k8s.io_jobsets.yaml", "v1alpha2")
    per_job = {r: n for r, n in expected_replicas(jobset)}
    pods = []
    for rjob in jobset["spec"]["replicatedJobs"]:
        labels = {"trainspec.dev/job": "pytorch-ddp", "jobset.sigs.k8s.io/replicatedjob-name": rjob["name"],
                  "jobset.sigs.k8s.io/job-index": "0", "batch.kubernetes.io/job-completion-index": "0"}
        pods.append(pod(f"pytorch-ddp-{rjob['name']}-0-0", labels, phase="Succeeded",
                        state={"terminated": {"exitCode": 0, "reason": "Completed"}}))
    state = job_state("pytorch-ddp", [jobset], pods, NOW)
    assert state.phase == "Succeeded" and per_job
    assert [(r.name, r.phase, r.exit_code) for r in state.replicas] == \
        [("master-0", "Succeeded", 0), ("worker-0", "Succeeded", 0)]


def test_a_jobset_of_one_pod_jobs_numbers_replicas_by_job_index():
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "j"},
              "spec": {"replicatedJobs": [{"name": "worker", "replicas": 3, "template": {"spec": {
                  "parallelism": 1, "completions": 1, "template": {"metadata": {"labels": {
                      "trainspec.dev/role": "worker"}}}}}}]}}
    pods = [pod(f"j-worker-{j}-0", {"jobset.sigs.k8s.io/replicatedjob-name": "worker",
                                    "jobset.sigs.k8s.io/job-index": str(j),
                                    "batch.kubernetes.io/job-completion-index": "0"}) for j in (2, 0)]
    state = job_state("j", [jobset], pods, NOW)
    assert [(r.name, r.pod) for r in state.replicas] == [("worker-0", "j-worker-0-0"), ("worker-1", ""),
                                                        ("worker-2", "j-worker-2-0")]


def test_plain_jobs_one_per_replica_and_a_recreated_pod_counts_as_a_restart():
    jobs = golden("pytorch-ddp", "k8s", ("Job",))
    jobs = [dict(j, status={"active": 1, "startTime": "2026-11-26T02:57:50Z"}) for j in jobs]
    labels = {"trainspec.dev/job": "pytorch-ddp", "trainspec.dev/role": "worker", "trainspec.dev/index": "0"}
    old = pod("pytorch-ddp-worker-0-aaaaa", labels, phase="Failed", created="2026-11-26T02:57:50Z",
              state={"terminated": {"exitCode": 1, "reason": "Error"}})
    new = pod("pytorch-ddp-worker-0-bbbbb", labels, created="2026-11-26T02:58:30Z")
    state = job_state("pytorch-ddp", jobs, [new, old], NOW)
    assert state.kind == "Job" and state.phase == "Running"
    worker = next(r for r in state.replicas if r.name == "worker-0")
    assert (worker.phase, worker.restarts, worker.pod) == ("Running", 1, "pytorch-ddp-worker-0-bbbbb")


def test_indexed_jobs_per_role_number_pods_by_completion_index():
    """Issue 31: the k8s target's Indexed Job per role; the pods carry no trainspec index, the Job controller's
    completion index (annotation and, from 1.28, label) numbers them."""
    jobs = golden("tf-ps", "k8s", ("Job",))
    assert [j["spec"]["completionMode"] for j in jobs] == ["Indexed"] * 3
    jobs = [dict(j, status={"active": 1, "startTime": "2026-11-26T02:57:50Z"}) for j in jobs]
    index = "batch.kubernetes.io/job-completion-index"
    pods = [pod(f"tf-ps-worker-{i}-abcde", {"trainspec.dev/job": "tf-ps", "trainspec.dev/role": "worker",
                                            "job-name": "tf-ps-worker"}, annotations={index: str(i)})
            for i in (2, 0)]
    state = job_state("tf-ps", jobs, pods, NOW)
    assert [r.name for r in state.replicas] == ["ps-0", "ps-1", "worker-0", "worker-1", "worker-2", "evaluator-0"]
    by_name = {r.name: r for r in state.replicas}
    assert by_name["worker-2"].pod == "tf-ps-worker-2-abcde" and by_name["worker-0"].pod == "tf-ps-worker-0-abcde"
    assert by_name["worker-1"].reason == "no pod" and state.phase == "Running"


def test_a_statefulset_role_numbers_pods_by_their_ordinal():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "j-ps", "namespace": "ml"},
           "spec": {"replicas": 2, "template": {"metadata": {"labels": {"trainspec.dev/job": "j",
                                                                         "trainspec.dev/role": "ps"}}}}}
    assert expected_replicas(sts) == [("ps", 0), ("ps", 1)]
    pods = [pod("j-ps-1", {"trainspec.dev/job": "j", "trainspec.dev/role": "ps", "apps.kubernetes.io/pod-index": "1"})]
    state = job_state("j", [sts], pods, NOW)
    assert [(r.name, r.pod) for r in state.replicas] == [("ps-0", ""), ("ps-1", "j-ps-1")]


def test_a_trainjob_with_its_runtime():
    objs = golden("pytorch-ddp", "trainjob", ("TrainJob", "TrainingRuntime"))
    trainjob = next(o for o in objs if o["kind"] == "TrainJob")
    status = {"conditions": [{"type": "Failed", "status": "True", "reason": "JobsFailed", "message": "node failed",
                              "lastTransitionTime": "2026-11-26T02:59:00Z"}]}
    objs = [with_status(trainjob, status, "trainer/trainer.kubeflow.org_trainjobs.yaml", "v1alpha1")] + \
        [o for o in objs if o["kind"] == "TrainingRuntime"]
    node1 = pod("pytorch-ddp-node-0-1", {"trainspec.dev/job": "pytorch-ddp", "trainspec.dev/role": "master",
                                         "jobset.sigs.k8s.io/replicatedjob-name": "node",
                                         "jobset.sigs.k8s.io/job-index": "0"},
                annotations={"batch.kubernetes.io/job-completion-index": "1"}, phase="Failed",
                state={"terminated": {"exitCode": 1, "reason": "Error"}})
    state = job_state("pytorch-ddp", objs, [node1], NOW)
    assert (state.kind, state.phase, state.message) == ("TrainJob", "Failed", "node failed")
    # one `node` Job: node 0 is the master, node 1 worker 0 (the pod template says master for both)
    assert rows(state) == [("master-0", "-", 0, None, "", "no pod"), ("worker-0", "Failed", 0, 1, "node-a", "Error")]


@pytest.mark.parametrize("waiting", ["CrashLoopBackOff", "ImagePullBackOff"])
def test_a_stuck_container_shows_why(waiting):
    (tfjob,) = golden("tf-single", "kubeflow", ("TFJob",))
    role = expected_replicas(tfjob)[0][0]
    p = pod("x", {"trainspec.dev/role": role, "trainspec.dev/index": "0"}, phase="Pending",
            state={"waiting": {"reason": waiting}})
    assert job_state("tf-single", [tfjob], [p], NOW).replicas[0].reason == waiting


def test_the_main_container_is_kubectls_default_container():
    from trainspec.cluster.status import main_container

    pod = {"metadata": {"annotations": {"kubectl.kubernetes.io/default-container": "trainer"}},
           "spec": {"containers": [{"name": "proxy"}, {"name": "trainer"}]}}
    assert main_container(pod) == "trainer"
    pod["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] = "gone"
    assert main_container(pod) == "proxy"
    assert main_container({"spec": {}}) is None
