"""The round-trip measure of issue 20, over a folder of upstream-style manifests.

For each manifest: `import --strict`; refused -> "refused" (with the first reason); accepted ->
compile to the source's target and compare with the source (`semantic_diff` for Kubeflow and
Volcano jobs, `exact_diff` for JobSets and batch Jobs): "same" or "DIFFERENT".  OpenPAI has no
same-kind target to compare with ("no target", accepted or refused); a TrainJob names its runtime
(spec v1.3) and is compared with `exact_diff`, as JobSets are.  A document that is not YAML, or names an API version
the reference CRDs do not serve, is "invalid": the API server would reject the source itself.
In scope: same + refused + DIFFERENT.

    TRAINSPEC_REFERENCE=../shared/reference python tests/roundtrip_report.py tests/import_manifests
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from manifest_semantics import exact_diff, job_object, semantic_diff  # noqa: E402

from trainspec.compiler import SpecErrors  # noqa: E402
from trainspec.importer import import_text  # noqa: E402
from trainspec.importer.verify import compile_text  # noqa: E402


def classify(path: Path) -> tuple[str, str]:
    text = path.read_text()
    openpai = path.suffix == ".json" or "protocolVersion" in text
    try:
        result = import_text(text, str(path), strict=True)
    except SpecErrors as errors:
        first = errors.errors[0]
        if first.message.startswith("YAML syntax error") or (first.path == "apiVersion" and "is not supported" in first.message):
            # not YAML, or an API version the reference CRDs do not serve: the API server rejects it as well
            return "invalid", first.format()
        # OpenPAI has no same-kind target whether import accepts it or not: the verdict must not decide the scope
        return ("no target" if openpai else "refused"), first.format()
    if openpai:
        return "no target", ""
    files = compile_text(result.text, result.target)
    out = [d for t in files.values() for d in yaml.safe_load_all(t) if isinstance(d, dict)]
    src = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    if result.target in ("jobset", "k8s", "trainjob"):
        kind = {"jobset": "JobSet", "k8s": "Job", "trainjob": "TrainJob"}[result.target]
        a, b = [d for d in src if d.get("kind") == kind], [d for d in out if d.get("kind") == kind]
        if kind == "Job" and len(a) == 1 and len(b) == 1:
            a, b = [list(p) for p in zip(*[batch_as_written(a[0], b[0], out)])]
            a += [d for d in src if d.get("kind") == "Service"]  # the pods' headless Service, when the file has it
            b += [d for d in out if d.get("kind") == "Service"][:len(a) - 1]
        if kind == "TrainJob":  # trainspec's own labels and the namespace it writes out are not the job's
            b = [_without_own(d, a[0] if a else {}) for d in b]
            a, b = [_quantities_as_text(d) for d in a], [_quantities_as_text(d) for d in b]
        diffs = ["number of objects"] if len(a) != len(b) else [x for s, o in zip(a, b) for x in exact_diff(s, o)]
    else:
        framework = result.spec["spec"]["framework"] if result.target == "volcano" else None
        diffs = semantic_diff(job_object(src), job_object(out), {}, framework)
    return ("same", "") if not diffs else ("DIFFERENT", "; ".join(diffs[:3]))


def batch_as_written(source: dict, compiled: dict, objects: list[dict]) -> tuple[dict, dict]:
    """A foreign batch/v1 Job and the k8s target's Job for it, made comparable: under generateName the spec keeps
    the prefix and each run names the Job `<run>-<role>` (the source's name is the server's, per run too); pods
    without a subdomain get the job's headless Service as theirs (additive: they become addressable)."""
    source, compiled = yaml.safe_load(yaml.safe_dump(source)), yaml.safe_load(yaml.safe_dump(compiled))
    prefix = (source.get("metadata") or {}).pop("generateName", None)
    if prefix and compiled["metadata"]["name"].startswith(prefix.rstrip("-") + "-"):
        source["metadata"]["name"] = compiled["metadata"]["name"]
    services = [d["metadata"]["name"] for d in objects if d.get("kind") == "Service"]
    pod, out_pod = source["spec"]["template"].get("spec") or {}, compiled["spec"]["template"]["spec"]
    if "subdomain" not in pod and out_pod.get("subdomain") in services:
        del out_pod["subdomain"]
    for job in (source, compiled):  # the API server's default: a resource's request is its limit when unset
        for container in (job["spec"]["template"].get("spec") or {}).get("containers") or []:
            res = container.get("resources") or {}
            limits = {k: str(v) for k, v in (res.get("limits") or {}).items()}
            if limits:
                res["limits"] = limits
                res["requests"] = {**limits, **{k: str(v) for k, v in (res.get("requests") or {}).items()}}
    return source, compiled


def _quantities_as_text(job: dict) -> dict:
    """`nvidia.com/gpu: 1` and `"1"` are one quantity to the API server (the compiler writes text)."""
    job = yaml.safe_load(yaml.safe_dump(job))
    res = (job.get("spec", {}).get("trainer") or {}).get("resourcesPerNode") or {}
    for key in ("requests", "limits"):
        if isinstance(res.get(key), dict):
            res[key] = {n: str(q) for n, q in res[key].items()}
    return job


def _without_own(job: dict, source: dict) -> dict:
    job = yaml.safe_load(yaml.safe_dump(job))
    meta = job["metadata"]
    labels = {k: v for k, v in (meta.pop("labels", None) or {}).items()
              if not k.startswith(("app.kubernetes.io/", "trainspec.dev/"))}
    if labels:
        meta["labels"] = labels
    if "namespace" not in (source.get("metadata") or {}) and meta.get("namespace") == "default":
        meta.pop("namespace")
    return job


def main(folder: str) -> int:
    counts: dict[str, int] = {}
    for path in sorted(Path(folder).iterdir()):
        if path.suffix not in (".yaml", ".json"):
            continue
        verdict, why = classify(path)
        counts[verdict] = counts.get(verdict, 0) + 1
        print(f"{verdict:10} {path.name}" + (f"  {why[:160]}" if why else ""))
    in_scope = counts.get("same", 0) + counts.get("refused", 0) + counts.get("DIFFERENT", 0)
    print(f"round-trip {counts.get('same', 0)}/{in_scope}, refused {counts.get('refused', 0)}, "
          f"accepted-then-different {counts.get('DIFFERENT', 0)}, no same-kind target {counts.get('no target', 0)}, "
          f"invalid {counts.get('invalid', 0)}")
    return 1 if counts.get("DIFFERENT") else 0


if __name__ == "__main__":
    os.environ.setdefault("TRAINSPEC_REFERENCE", str(Path(__file__).parent.parent.parent / "shared" / "reference"))
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parent / "import_manifests")))
