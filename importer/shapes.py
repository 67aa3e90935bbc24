"""The shapes of the manifest fields the importer reads, checked once before mapping.

Only the fields the importer looks into are described; any other key is passed
on to the patches as written.  A `null` value means "unset" in Kubernetes, so
null-valued keys are dropped first.  Every wrong shape is reported at once, at
its line and column.
"""

from __future__ import annotations

from trainspec.compiler.errors import ErrorSink, SpecErrors
from trainspec.compiler.loader import Document

STR, INT, BOOL, SCALAR, QUANTITY = "a string", "an integer", "true or false", "a string or number", "a quantity"
ANY_MAP: dict = {}  # a mapping, keys not checked


def _list(item) -> list:
    return [item]


SCALAR_MAP = {"*": SCALAR}
HANDLER = {"exec": {"command": _list(STR)}, "httpGet": ANY_MAP, "tcpSocket": ANY_MAP}
PROBE = {**HANDLER, **{k: INT for k in ("initialDelaySeconds", "periodSeconds", "timeoutSeconds",
                                        "successThreshold", "failureThreshold")}}
ENV = {"name": STR, "value": SCALAR, "valueFrom": {"*": ANY_MAP}}
PORT = {"name": STR, "containerPort": INT, "hostPort": INT, "protocol": STR, "hostIP": STR}
RESOURCES = {"requests": {"*": QUANTITY}, "limits": {"*": QUANTITY}}
CONTAINER = {
    "name": STR, "image": STR, "command": _list(STR), "args": _list(STR), "workingDir": STR, "env": _list(ENV),
    "resources": RESOURCES, "ports": _list(PORT), "imagePullPolicy": STR, "securityContext": ANY_MAP,
    "volumeMounts": _list({"name": STR, "mountPath": STR, "readOnly": BOOL}),
    "lifecycle": {"postStart": HANDLER, "preStop": HANDLER},
    "livenessProbe": PROBE, "readinessProbe": PROBE, "startupProbe": PROBE, "restartPolicy": STR,
}
POD = {
    "containers": _list(CONTAINER), "initContainers": _list(CONTAINER),
    "volumes": _list({"name": STR, "*": ANY_MAP}), "imagePullSecrets": _list(ANY_MAP),
    "serviceAccountName": STR, "nodeSelector": SCALAR_MAP, "tolerations": _list(ANY_MAP), "affinity": ANY_MAP,
    "securityContext": ANY_MAP, "schedulerName": STR, "priorityClassName": STR, "restartPolicy": STR,
    "activeDeadlineSeconds": INT, "subdomain": STR, "hostname": STR,
}
TEMPLATE = {"metadata": {"labels": SCALAR_MAP, "annotations": SCALAR_MAP}, "spec": POD}
META = {"name": STR, "namespace": STR, "labels": SCALAR_MAP, "annotations": SCALAR_MAP}
RUN_POLICY = {"cleanPodPolicy": STR, "ttlSecondsAfterFinished": INT, "activeDeadlineSeconds": INT,
              "backoffLimit": INT, "schedulingPolicy": {"minAvailable": INT, "queue": STR, "priorityClass": STR}}
REPLICA = {"replicas": INT, "restartPolicy": STR, "template": TEMPLATE}
KUBEFLOW = {"metadata": META, "spec": {"runPolicy": RUN_POLICY, "elasticPolicy": ANY_MAP, "slotsPerWorker": INT,
                                       "mpiImplementation": STR, "sshAuthMountPath": STR, "successPolicy": STR,
                                       "jobMode": STR, "nprocPerNode": SCALAR}}
VOLCANO = {"metadata": META, "spec": {
    "tasks": _list({"name": STR, "replicas": INT, "template": TEMPLATE, "policies": _list(ANY_MAP)}),
    "plugins": {"*": _list(SCALAR)}, "policies": _list(ANY_MAP), "minAvailable": INT, "maxRetry": INT,
    "queue": STR, "schedulerName": STR, "priorityClassName": STR, "ttlSecondsAfterFinished": INT}}


JOB_SPEC = {"parallelism": INT, "completions": INT, "completionMode": STR, "backoffLimit": INT, "template": TEMPLATE,
            "backoffLimitPerIndex": INT, "maxFailedIndexes": INT, "suspend": BOOL, "activeDeadlineSeconds": INT,
            "ttlSecondsAfterFinished": INT, "podFailurePolicy": {"rules": _list(ANY_MAP)},
            "successPolicy": {"rules": _list(ANY_MAP)}}
SERVICE = {"metadata": META, "spec": {"clusterIP": STR, "selector": SCALAR_MAP, "ports": _list(ANY_MAP)}}
OTHER: dict[str, dict] = {
    "jobset": {"metadata": META, "spec": {"replicatedJobs": _list({"name": STR, "replicas": INT, "template": {
        "metadata": {"labels": SCALAR_MAP, "annotations": SCALAR_MAP}, "spec": JOB_SPEC}}),
        "ttlSecondsAfterFinished": INT, "successPolicy": {"operator": STR, "targetReplicatedJobs": _list(STR)}}},
    "batch": {"metadata": META, "spec": JOB_SPEC},
    "service": SERVICE,  # a batch Job's headless Service (batch.py)
    "openpai": {"jobName": STR, "name": STR, "image": STR, "prerequisites": _list(ANY_MAP), "parameters": ANY_MAP,
                "defaults": ANY_MAP, "retryCount": INT, "jobRetryCount": INT},  # openpai.py checks the roles
}


def _prune(value):
    if isinstance(value, dict):
        return {k: _prune(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def _scalar_ok(kind: str, value) -> bool:
    if kind == STR:
        return isinstance(value, str)
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == BOOL:
        return isinstance(value, bool)
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _describe(shape) -> str:
    if isinstance(shape, str):
        return shape
    if isinstance(shape, list):
        return "a list"
    return "a mapping"


def _check(value, shape, path: tuple, sink: ErrorSink) -> None:
    if isinstance(shape, str):
        if not _scalar_ok(shape, value):
            sink.add(path, f"is {type(value).__name__ if value is not None else 'null'}", shape)
    elif isinstance(shape, list):
        if not isinstance(value, list):
            sink.add(path, "is not a list", "a list")
            return
        for i, item in enumerate(value):
            _check(item, shape[0], path + (i,), sink)
    else:
        if not isinstance(value, dict):
            sink.add(path, "is not a mapping", _describe(shape))
            return
        for key, item in value.items():
            sub = shape.get(key, shape.get("*"))
            if sub is not None:
                _check(item, sub, path + (key,), sink)


def checked(doc: Document, kubeflow_field: str | None) -> dict:
    """The job's data with nulls dropped; SpecErrors listing every field of the wrong shape."""
    data = _prune(doc.data)
    shape: dict = dict(KUBEFLOW if kubeflow_field else VOLCANO)
    if kubeflow_field in OTHER:
        shape = OTHER[kubeflow_field]
    elif kubeflow_field == "trainjob":  # the merged pod is checked as a template when it is read
        shape = {"metadata": META, "spec": {"runtimeRef": {"name": STR, "kind": STR},
                                            "trainer": {"image": STR, "command": _list(STR), "args": _list(STR),
                                                        "env": _list(ENV), "numNodes": INT,
                                                        "resourcesPerNode": RESOURCES}}}
    elif kubeflow_field:
        shape["spec"] = {**shape["spec"], kubeflow_field: {"*": REPLICA}}
    sink = ErrorSink(doc.file, doc.positions, doc.key_positions)
    _check(data, shape, (), sink)
    if sink.errors:
        raise SpecErrors(sink.errors)
    return data
