"""The compiler's Kubernetes shapes: generated from kubernetes-validate, and agreeing with it."""

from __future__ import annotations

import copy
import sys

import kubernetes_validate
import pytest

from trainspec.compiler.errors import ErrorSink
from trainspec.compiler.kube_shapes import check, check_list, shapes
from trainspec.compiler.reader import Reader

from helpers import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import gen_kube_shapes  # noqa: E402

VERSION = "1.36"  # the newest supported (scripts/gen_kube_shapes.py)


def test_shapes_are_what_kubernetes_validate_defines():
    """The shapes read from compiler/apiserver/crds/core.json (the object checks' table) are what
    kubernetes-validate defines; scripts/gen_kube_shapes.py's SINCE table is current."""
    ours = shapes()
    theirs = gen_kube_shapes.shapes()
    assert {name: ours[name] for name in theirs} == theirs
    assert (ROOT / "compiler" / "kube_shapes_data.py").read_text() == gen_kube_shapes.module_text()


def _ours(field: str, value) -> list[str]:
    sink = ErrorSink("job.yaml")
    r = Reader(sink)
    if field == "tolerations":
        check_list(r, value, (field,), "Toleration")
    else:
        check(r, value, (field,), {"affinity": "Affinity", "securityContext": "SecurityContext",
                                   "podSecurityContext": "PodSecurityContext"}[field])
    return [e.format() for e in sink.errors]


def _theirs(field: str, value) -> bool:
    """Whether Kubernetes' strict schema accepts a pod with `field` set to `value`."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    if field == "securityContext":
        pod["spec"]["containers"][0]["securityContext"] = copy.deepcopy(value)
    else:
        pod["spec"]["securityContext" if field == "podSecurityContext" else field] = copy.deepcopy(value)
    try:
        kubernetes_validate.validate(pod, VERSION, strict=True)
    except kubernetes_validate.ValidationError:
        return False
    return True


GOOD = [
    ("tolerations", [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                     {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoExecute",
                      "tolerationSeconds": 60}]),
    ("affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "x"}},
             "namespaces": ["ml"]}]}}),
    ("securityContext", {"runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": True, "privileged": False,
                         "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                         "capabilities": {"add": ["IPC_LOCK"], "drop": ["ALL"]},
                         "seccompProfile": {"type": "RuntimeDefault"}, "seLinuxOptions": {"level": "s0:c1"}}),
    ("podSecurityContext", {"fsGroup": 1000, "fsGroupChangePolicy": "OnRootMismatch", "supplementalGroups": [5],
                            "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
                            "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}}),
]

# Shapes both must refuse: unknown fields, wrong types, missing required fields.
BAD = [
    ("tolerations", [{"key": "a", "tolerationSecond": 1}]),
    ("tolerations", [{"key": "a", "tolerationSeconds": "60", "effect": "NoExecute"}]),
    ("tolerations", {"key": "a"}),
    ("affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}),
    ("affinity", {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}}),
    ("affinity", {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}}),
    ("affinity", {"podAntiAffinity": {"preferred": []}}),
    ("securityContext", {"runAsUser": "1000"}),
    ("securityContext", {"capabilities": {"drop": "ALL"}}),
    ("securityContext", {"fsGroup": 1}),
    ("securityContext", {"seccompProfile": {}}),
    ("podSecurityContext", {"sysctls": [{"name": "a"}]}),
    ("podSecurityContext", {"runAsNonRoot": "yes"}),
    ("podSecurityContext", {"capabilities": {}}),
]


@pytest.mark.parametrize("field,value", GOOD, ids=[f for f, _ in GOOD])
def test_what_kubernetes_accepts_we_accept(field, value):
    assert _theirs(field, value)
    assert _ours(field, value) == []


@pytest.mark.parametrize("field,value", BAD, ids=[f"{f}-{i}" for i, (f, _) in enumerate(BAD)])
def test_what_kubernetes_refuses_we_refuse(field, value):
    assert not _theirs(field, value)
    assert _ours(field, value)
