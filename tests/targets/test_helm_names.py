"""Spec v1.2's kept names and generic success in the chart, rendered with a real Helm engine:
the default render is exactly the k8s target's objects, `workload: jobset` exactly the jobset target's."""

from __future__ import annotations

import pytest

helm_chart = pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
from test_helm import assert_same_objects, k8s_objects, plan_of, render, write_chart  # noqa: E402
from test_helm_jobset import JOBSET, jobset_objects  # noqa: E402


def _tf_names(data: dict) -> None:
    data["apiVersion"] = "trainspec/v1.2"
    data["spec"]["containerName"] = "trainer"
    data["spec"]["roles"]["ps"]["taskName"] = "pserver"
    data["spec"]["roles"]["worker"]["containerName"] = "tf-worker"


def _generic(success: dict | None):
    def edit(data: dict) -> None:
        if success is None:
            data["spec"].pop("success")
        else:
            data["spec"]["success"] = success
        data["spec"]["roles"]["trainer"]["taskName"] = "workers"
    return edit


CASES = [("tf-ps.yaml", _tf_names), ("generic-coordinator.yaml", _generic(None)),
         ("generic-coordinator.yaml", _generic({"role": "trainer", "policy": "AnyReplica"}))]


@pytest.mark.parametrize("spec,edit", CASES)
def test_chart_renders_the_targets_with_kept_names(spec, edit, tmp_path):
    plan = plan_of(spec, tmp_path, edit)
    chart = write_chart(plan, tmp_path)
    assert_same_objects(render(chart, plan.namespace), k8s_objects(plan))
    assert_same_objects(render(chart, plan.namespace, JOBSET), jobset_objects(plan))


def test_chart_names_are_knobs(tmp_path):
    plan = plan_of("tf-ps.yaml", tmp_path, _tf_names)
    chart = write_chart(plan, tmp_path)
    docs = render(chart, plan.namespace, {**JOBSET, "roles": {"ps": {"taskName": "params"}}})
    (js,) = [d for d in docs if d["kind"] == "JobSet"]
    assert "params" in [rj["name"] for rj in js["spec"]["replicatedJobs"]]
    (topology,) = [d for d in docs if d["kind"] == "ConfigMap"]
    assert topology["data"]["TRAINSPEC_HOSTS_PS"].startswith("tf-ps-params-0-0.tf-ps:")
