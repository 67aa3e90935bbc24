"""trainspec against a real API server's recorded verdicts (tests/data/apiserver/verdicts.jsonl).

scripts/record_apiserver_verdicts.py compiled every mutation of tests/apiserver_mutations.py (every
spec field path, every field a patch reaches in each target's objects), sent what each target wrote
to a kube-apiserver with the upstream CRDs (dry run) and wrote down its answers.  Here trainspec must
give the same answer on every case the server saw: refuse what it refused, accept what it accepted.
Regenerating is one command (the script), reviewed as a diff of the data.
"""

from __future__ import annotations

import json

import apiserver_mutations as M
import pytest

from helpers import ROOT

DATA = ROOT / "tests" / "data" / "apiserver" / "verdicts.jsonl"
LINES = [json.loads(line) for line in DATA.read_text().splitlines()] if DATA.is_file() else []
# the server's own answers (not `not sent`, nor `cluster state`: an admission plugin's lookup of what the
# cluster holds, e.g. a PriorityClass, which no offline check can know)
SENT = [line for line in LINES if line["server"] in ("accept", "refuse")]
# the causes the issue names: fast to run, in the default set (the rest is `slow`)
NAMED = ("topologySpreadConstraints", "ports", "Probe", "subPath", "mountPropagation", "readinessGates",
         "schedulingGates", ".os.", "terminationMessagePolicy", "sleep", "defaultMode", "items", "dnsConfig",
         "recursiveReadOnly", "startupPolicy", "successPolicy", "allowPrivilegeEscalation", "spec.env.",
         "resources.limits", ".exec.", "supplementalGroupsPolicy", "matchLabelKeys")


def _agrees(line: dict) -> tuple[bool, str]:
    """trainspec refuses what the server refused and takes what it took; and where the server took a custom
    resource, trainspec warns that the operator's pods would be refused exactly when the server refused
    those pods (`pods`)."""
    from trainspec.compiler.apiserver import check_objects
    from trainspec.compiler.apiserver.crd import OPERATOR_PODS

    ours, why, docs = M.offline(line["case"] | ({"target": line["target"]} if "patches" in line["case"] else {}),
                                line["target"])
    text = f"{line['id']} on {line['target']}: server {line['server']} ({line['reason']}); trainspec {ours} " \
           f"({why[:300]})"
    if ours != line["server"]:
        return False, text
    if ours == "accept" and line.get("pods"):
        warned = any(f.warning and OPERATOR_PODS in f.message for f in check_objects(docs or [], (1, 36)))
        if warned != (line["pods"] == "refuse"):
            return False, text + f"; the operator's pods: server {line['pods']}, trainspec warned: {warned}"
    return True, text


def test_the_data_is_recorded_from_a_real_server_and_covers_every_mutation():
    if not LINES:
        pytest.skip("tests/data/apiserver/verdicts.jsonl not recorded yet: scripts/record_apiserver_verdicts.py")
    versions = {line["version"] for line in LINES}
    assert versions and all(v.startswith("v1.") for v in versions), versions
    recorded = {line["id"] for line in LINES}
    generated = {case["id"] for case in M.patch_mutations() + M.spec_mutations()}
    assert generated <= recorded, sorted(generated - recorded)[:20]
    assert sum(line["server"] == "refuse" for line in SENT) > 100  # the data exercises refusals, not only accepts


@pytest.mark.parametrize("target", M.TARGETS)
def test_trainspec_agrees_on_the_named_causes(target):
    lines = [line for line in SENT if line["target"] == target and any(k in line["id"] for k in NAMED)]
    if not lines:
        pytest.skip("no recorded verdicts for these causes")
    wrong = [text for ok, text in map(_agrees, lines) if not ok]
    assert not wrong, f"{len(wrong)} of {len(lines)} disagree:\n" + "\n".join(wrong[:40])


@pytest.mark.slow
@pytest.mark.parametrize("target", M.TARGETS)
def test_trainspec_agrees_with_every_recorded_verdict(target):
    lines = [line for line in SENT if line["target"] == target]
    if not lines:
        pytest.skip("no recorded verdicts")
    wrong = [text for ok, text in map(_agrees, lines) if not ok]
    assert not wrong, f"{len(wrong)} of {len(lines)} disagree:\n" + "\n".join(wrong[:40])
