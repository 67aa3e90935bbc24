"""The MPI operator (kubeflow/mpi-operator v2beta1 MPIJob).

Sources (shared/reference/CONVENTIONS.md §1.4; kubeflow/mpi-operator @caa3c47f,
pkg/controller/mpi_job_controller.go `newConfigMap`, `newWorker`, `newLauncherPodTemplate`,
`setupSSHOnPod`, `updateMPIJobStatus`):
  * workers: pods `<job>-worker-<i>` with hostname = pod name and subdomain `<job>` (the
    headless Service `<job>`); a worker without a command runs `/usr/sbin/sshd -De`;
  * launcher: a batch Job `<job>-launcher` (its backoffLimit is runPolicy.backoffLimit);
    the job succeeds or fails with it;
  * ConfigMap `<job>-config`, key `hostfile`, mounted at /etc/mpi on the launcher:
    `<job>-worker-<i>.<job>.<ns>.svc slots=N` (OpenMPI) or `host:N` (Intel, MPICH);
  * Secret `<job>-ssh` (ssh-privatekey, ssh-publickey) mounted at sshAuthMountPath
    (default /root/.ssh) as id_rsa, id_rsa.pub, authorized_keys, mode 0600, in every pod;
  * env appended to container 0: K_MPI_JOB_ROLE; on the launcher OMPI_MCA_orte_keep_fqdn_hostnames,
    OMPI_MCA_orte_default_hostfile, OMPI_MCA_plm_rsh_args, OMPI_MCA_orte_set_default_slots
    (OpenMPI), I_MPI_HYDRA_HOST_FILE and I_MPI_PERHOST (Intel), HYDRA_HOST_FILE (MPICH), and
    empty NVIDIA_VISIBLE_DEVICES/NVIDIA_DRIVER_CAPABILITIES unless runLauncherAsWorker;
  * launcherCreationPolicy (default AtStartup): with WaitForWorkersReady the launcher is created
    only once every worker pod is Running and Ready (the CRD's field text; the controller's
    countReadyWorkerPods): a start gate (startorder.py) with no time limit, as the controller
    re-checks on every sync; with AtStartup the launcher may start before the workers' sshd listens.
"""

from __future__ import annotations

import copy

from .. import positions
from . import UNLIMITED, ControllerSuccess, Created, Gate, append_env, fail, meta, pod_wrapper

HOSTFILE = "/etc/mpi/hostfile"


def hostfile(name: str, ns: str, workers: int, slots: int, impl: str) -> str:
    hosts = [f"{name}-worker-{j}.{name}.{ns}.svc" for j in range(workers)]
    if impl == "OpenMPI":
        return "".join(f"{h} slots={slots}\n" for h in hosts)
    return "".join(f"{h}:{slots}\n" for h in hosts)


def launcher_env(impl: str, slots: int, as_worker: bool) -> list[tuple[str, object]]:
    env: list[tuple[str, object]] = [("K_MPI_JOB_ROLE", "launcher")]
    if impl == "OpenMPI":
        env += [("OMPI_MCA_orte_keep_fqdn_hostnames", "true"), ("OMPI_MCA_orte_default_hostfile", HOSTFILE),
                ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
                ("OMPI_MCA_orte_set_default_slots", str(slots))]
    elif impl == "Intel":
        env += [("I_MPI_HYDRA_HOST_FILE", HOSTFILE), ("I_MPI_PERHOST", str(slots))]
    elif impl == "MPICH":
        env.append(("HYDRA_HOST_FILE", HOSTFILE))
    if not as_worker:
        env += [("NVIDIA_VISIBLE_DEVICES", ""), ("NVIDIA_DRIVER_CAPABILITIES", "")]
    return env


def _add_volume(pod_spec: dict, container: dict, volume: dict, mount_path: str) -> None:
    names = {v.get("name") for v in pod_spec.get("volumes") or []}
    if volume["name"] in names:
        return  # the template already mounts one of that name (our compiler writes the same volumes)
    if any(m.get("mountPath") == mount_path for m in container.get("volumeMounts") or []):
        return
    pod_spec.setdefault("volumes", []).append(volume)
    container.setdefault("volumeMounts", []).append({"name": volume["name"], "mountPath": mount_path})


def create(job: dict, source: str) -> Created:
    name, ns = meta(job)
    spec = job.get("spec") or {}
    specs = spec.get("mpiReplicaSpecs") or {}
    if "Launcher" not in specs:
        raise fail(source, job, ("spec", "mpiReplicaSpecs"), "has no Launcher", label=f"MPIJob {name}")
    slots = int(spec.get("slotsPerWorker", 1))
    impl = str(spec.get("mpiImplementation") or "OpenMPI")
    ssh_path = str(spec.get("sshAuthMountPath") or "/root/.ssh")
    as_worker = bool(spec.get("runLauncherAsWorker", False))
    run_policy = spec.get("runPolicy") or {}
    backoff = run_policy.get("backoffLimit")
    n_workers = int((specs.get("Worker") or {}).get("replicas", 1)) if "Worker" in specs else 0
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-config", "namespace": ns},
              "data": {"hostfile": hostfile(name, ns, n_workers, slots, impl)}}
    ssh_volume = {"name": "ssh-auth", "secret": {
        "secretName": f"{name}-ssh", "defaultMode": 0o600,
        "items": [{"key": "ssh-privatekey", "path": "id_rsa"}, {"key": "ssh-publickey", "path": "id_rsa.pub"},
                  {"key": "ssh-publickey", "path": "authorized_keys"}]}}
    objects: list[dict] = [config]
    launcher_pod = ""
    for rtype in ("Worker", "Launcher"):
        if rtype not in specs:
            continue
        rspec = specs[rtype] or {}
        rt = rtype.lower()
        policy = str(rspec.get("restartPolicy") or "Never")
        if policy not in ("Never", "OnFailure"):
            raise fail(source, specs, (rtype, "restartPolicy"),
                       f"{policy!r} is not Never or OnFailure (what the MPI operator accepts)",
                       label=f"MPIJob {name} spec.mpiReplicaSpecs")
        count = 1 if rt == "launcher" else n_workers
        for i in range(count):
            template = positions.copy(rspec.get("template") or {})
            pod_spec = template.setdefault("spec", {})
            if not pod_spec.get("containers"):
                raise fail(source, specs, (rtype, "template", "spec"), "has no containers",
                           label=f"MPIJob {name} spec.mpiReplicaSpecs")
            main = pod_spec["containers"][0]
            pod = f"{name}-launcher" if rt == "launcher" else f"{name}-worker-{i}"
            labels = {"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-name": name,
                      "training.kubeflow.org/replica-type": rt, "training.kubeflow.org/job-role": rt}
            _add_volume(pod_spec, main, copy.deepcopy(ssh_volume), ssh_path)
            if rt == "launcher":
                append_env(main, launcher_env(impl, slots, as_worker))
                _add_volume(pod_spec, main, {"name": "mpi-job-config", "configMap": {
                    "name": f"{name}-config", "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}]}},
                    "/etc/mpi")
                limit = int(backoff) if backoff is not None else 6  # a batch Job's default
                launcher_pod = pod
            else:
                labels["training.kubeflow.org/replica-index"] = str(i)
                append_env(main, [("K_MPI_JOB_ROLE", "worker")])
                if main.get("command") is None:
                    main["command"] = ["/usr/sbin/sshd", "-De"]
                limit = 0 if policy == "Never" else UNLIMITED
            objects.append(pod_wrapper(name, pod, rt, i, template, restart=policy, backoff_limit=limit,
                                       hostname=pod, subdomain=name, labels=labels, namespace=ns))
    deadline = run_policy.get("activeDeadlineSeconds")
    creation = str(spec.get("launcherCreationPolicy") or "AtStartup")
    if creation not in ("AtStartup", "WaitForWorkersReady"):
        raise fail(source, job, ("spec", "launcherCreationPolicy"),
                   f"{creation!r} is not AtStartup or WaitForWorkersReady", label=f"MPIJob {name}")
    workers = tuple(f"{name}-worker-{i}" for i in range(n_workers))
    gates = {launcher_pod: [Gate(workers, "ready", "launcherCreationPolicy WaitForWorkersReady")]} \
        if creation == "WaitForWorkersReady" and workers and launcher_pod else {}
    return Created(name, ns, "mpi", objects, ControllerSuccess([[launcher_pod]], 1, "launcher-0"),
                   clean_pod_policy=str(run_policy.get("cleanPodPolicy") or "None"),
                   backoff_limit=None, active_deadline=None if deadline is None else float(deadline), gates=gates)
