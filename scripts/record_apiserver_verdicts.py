"""Record a real API server's verdicts on every mutation of tests/apiserver_mutations.py.

    TRAINSPEC_TEST_KUBECONFIG=/work/kube/kubeconfig python scripts/record_apiserver_verdicts.py

For each mutation and target whose compile trainspec accepts, every object written is created with
`dryRun=All` (and the server's default fieldValidation, Warn: an unknown field is dropped, not
refused); the first refusal is the verdict.  For a custom resource, each pod template inside it is
also created as a Pod (what the operator creates): its verdict is recorded apart (`pods`), as
trainspec warns about it rather than refusing (the server takes the resource).  A
mutation trainspec refuses is sent with the patches dropped from the spec when it was one (the
patch's own object, written without our checks, from the k8s objects of the unpatched spec) or not
at all (a spec field trainspec refuses has no object to send: its verdict is `not sent`).

`python scripts/record_apiserver_verdicts.py patch/k8s/` records only the ids starting with the
argument (and keeps the others).  Writes tests/data/apiserver/verdicts.jsonl (one case a line,
sorted: a regeneration reviews as a diff) with the server's version;
tests/compiler/test_apiserver_differential.py checks trainspec agrees.
Creates nothing (dry run): the cluster is left as it was.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

PLURALS = {"ConfigMap": "configmaps", "Service": "services", "Secret": "secrets", "Pod": "pods", "Job": "jobs",
           "Deployment": "deployments", "JobSet": "jobsets", "PyTorchJob": "pytorchjobs", "TrainJob": "trainjobs",
           "TrainingRuntime": "trainingruntimes", "ClusterTrainingRuntime": "clustertrainingruntimes",
           "PodGroup": "podgroups"}
CLUSTER_SCOPED = {"ClusterTrainingRuntime"}
OUT = ROOT / "tests" / "data" / "apiserver" / "verdicts.jsonl"
# refusals that come from what the cluster holds (admission plugins looking objects up), not from
# validating the object: recorded as `cluster state`, outside the comparison
CLUSTER_STATE = ("no PriorityClass with name", "error looking up service account", "not found",
                 "exceeded quota", "namespace", "RuntimeClass")


def pods_inside(doc: dict) -> list[dict]:
    """A Pod for each pod template inside a custom resource (core kinds are validated whole already)."""
    found: list[dict] = []

    def walk(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "template" and isinstance(item, dict) and isinstance(item.get("spec"), dict) \
                        and "containers" in item["spec"]:
                    meta = copy.deepcopy(item.get("metadata") or {})
                    meta["name"] = "diff-pod"
                    meta.pop("namespace", None)
                    found.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                                  "spec": copy.deepcopy(item["spec"])})
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(doc)
    return found


def send(cluster, doc: dict, namespace: str) -> tuple[str, str]:
    """One dry-run create, retried while the server is unreachable (a restart), for up to five minutes."""
    import time

    from trainspec.cluster.errors import ClusterError

    for _ in range(60):
        try:
            return _send(cluster, doc, namespace)
        except ClusterError:
            time.sleep(5)
    return _send(cluster, doc, namespace)


def _send(cluster, doc: dict, namespace: str) -> tuple[str, str]:
    from trainspec.cluster.errors import ApiFailure

    api = doc["apiVersion"]
    base = f"/api/{api}" if "/" not in api else f"/apis/{api}"
    kind = doc["kind"]
    plural = PLURALS[kind]
    path = f"{base}/{plural}" if kind in CLUSTER_SCOPED else f"{base}/namespaces/{namespace}/{plural}"
    body = copy.deepcopy(doc)
    body.setdefault("metadata", {}).pop("namespace", None)
    try:
        cluster.request("POST", path, {"dryRun": "All"}, body)
    except ApiFailure as exc:
        if exc.status.code == 409:  # AlreadyExists cannot happen with dry-run, but a conflict is not a refusal
            return "accept", ""
        text = str(exc)
        if exc.status.code != 422 and any(marker in text for marker in CLUSTER_STATE):
            return "cluster state", text
        return "refuse", text
    return "accept", ""


def verdict(cluster, docs: list[dict], namespace: str) -> tuple[str, str, str]:
    """(the objects' verdict, its reason, the verdict on the Pods of the templates inside custom resources:
    accept, refuse, or "" when there are none)."""
    pods = ""
    for doc in docs:
        answer, reason = send(cluster, doc, namespace)
        if answer != "accept":
            return answer, f"{doc['kind']}: {reason}", ""
    for doc in docs:
        if doc["apiVersion"] in ("v1", "batch/v1", "apps/v1"):
            continue
        for pod in pods_inside(doc):
            answer, _ = send(cluster, pod, namespace)
            pods = "refuse" if answer == "refuse" or pods == "refuse" else (pods or answer)
    return "accept", "", pods


def main() -> int:

    from trainspec.cluster.client import Cluster

    kubeconfig = os.environ.get("TRAINSPEC_TEST_KUBECONFIG") or "/work/kube/kubeconfig"
    cluster = Cluster(kubeconfig=kubeconfig)
    version = cluster.request("GET", "/version")["gitVersion"]
    namespace = cluster.namespace
    created = _service_account(cluster, namespace)
    try:
        return _record(cluster, version, namespace, created)
    finally:
        if created:  # leave the cluster as it was
            cluster.request("DELETE", f"/api/v1/namespaces/{namespace}/serviceaccounts/default")


def _service_account(cluster, namespace: str) -> bool:
    """The ServiceAccount admission plugin refuses a Pod without the namespace's `default` account, which no
    controller makes on a server without controllers: made for the run (True), deleted after it."""
    from trainspec.cluster.errors import ApiFailure

    try:
        cluster.request("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/default")
        return False
    except ApiFailure:
        cluster.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                        body={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
        return True


def _record(cluster, version: str, namespace: str, created: bool) -> int:
    import apiserver_mutations as M

    only = sys.argv[1] if len(sys.argv) > 1 else ""
    cases = [c for c in M.patch_mutations() + M.spec_mutations() if c["id"].startswith(only)]
    lines = []
    for number, case in enumerate(cases, 1):
        targets = (case["target"],) if case.get("target") else M.TARGETS
        for target in targets:
            ours, why, docs = M.offline(case, target)
            if docs is None and case.get("patches"):
                base = dict(case)
                base.pop("patches")
                _, _, unpatched = M.offline(base, target)
                docs = _patched(unpatched, case, target) if unpatched is not None else None
            pods = ""
            if docs is None:
                server, reason = "not sent", ""
            else:
                server, reason, pods = verdict(cluster, docs, namespace)
            line = {"id": case["id"], "target": target, "case": {k: v for k, v in case.items()
                                                                 if k in ("set", "patches")},
                    "server": server, "reason": reason[:200], "trainspec": ours, "version": version}
            if pods:
                line["pods"] = pods
            lines.append(line)
        if number % 200 == 0:
            print(f"{number}/{len(cases)}", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    if only and OUT.is_file():  # a partial run (ids starting with the argument) replaces only those
        lines += [line for line in map(json.loads, OUT.read_text().splitlines()) if not line["id"].startswith(only)]
    lines.sort(key=lambda item: (item["id"], item["target"]))
    OUT.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    compared = [line for line in lines if line["server"] in ("accept", "refuse")]
    agree = sum(line["server"] == line["trainspec"] for line in compared)
    sent = len(compared)
    print(f"{len(lines)} verdicts from {version}; trainspec agrees on {agree} of the {sent} sent", file=sys.stderr)
    return 0


def _patched(docs: list[dict], case: dict, target: str) -> list[dict] | None:
    """The unpatched objects with the case's patch ops applied as the target does (no checks)."""
    import jsonpatch

    try:
        if target == "k8s":
            return jsonpatch.apply_patch(docs, case["patches"])
        return docs[:-1] + [jsonpatch.apply_patch(docs[-1], case["patches"])]
    except Exception:  # noqa: BLE001 - a patch that does not apply has no object to send
        return None


if __name__ == "__main__":
    raise SystemExit(main())
