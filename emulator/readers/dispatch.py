"""From what the user names on the command line to a run model.

`trainspec run` takes a spec (its plan, read by from_plan.py: no target is
compiled), a compiled `k8s.yaml`, or a compiled `compose.yaml`. Secrets the manifests
reference but do not contain come from --secret; the MPI ssh Secret is made
fresh for each run when absent (the keys exist only in memory and in the
run's containers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ...compiler.errors import UsageError
from ...compiler.loader import Document
from ...compiler.plan import JobPlan
from ...termsafe import neutralise
from ..model.errors import FieldError
from ..model.job import JobModel
from .k8s import from_k8s
from .plan import from_plan
from .positions import located, reading
from .secrets import add_ssh_secrets, parse_key_options, ssh_keypair
from .shapes import check_compose, check_documents, check_run_size

SPEC_API = "trainspec/v1"


def read_documents(path: str) -> list[Any]:
    """The file's YAML (or JSON) documents as data (`load_documents` keeps their positions)."""
    return [d.data for d in load_documents(path)]


def load_documents(path: str) -> list[Document]:
    """The file's YAML (or JSON) documents, read with the compiler's loader and its limits
    (file size, alias expansion, nesting depth) and positions: a compiled file is input like a spec,
    and its errors are at file:line:column as a spec's are."""
    from ...compiler.loader import load_file

    p = Path(path)
    if not p.exists():
        raise UsageError("no such file", where=path, hint="check the path")
    if p.is_dir():
        raise UsageError(f"{path} is a directory without Chart.yaml",
                         hint="name a spec, a compiled file (k8s, compose, kubeflow, volcano, jobset, trainjob) "
                              "or a Helm chart folder")
    if p.suffix.lower() == ".jsonnet":
        raise UsageError("a .jsonnet file is a spec", where=path)  # never reached: load() compiles it
    return [d for d in load_file(path) if d.data is not None]


def is_compose(docs: list[Any] | None) -> bool:
    """A compose file: one document, a mapping with `services`."""
    return docs is not None and len(docs) == 1 and isinstance(docs[0], dict) and "services" in docs[0]


def is_spec(path: str, docs: list[Any] | None) -> bool:
    if path.endswith(".jsonnet"):
        return True
    return any(isinstance(d, dict) and (d.get("apiVersion") == SPEC_API or d.get("kind") == "TrainingJob")
               for d in docs or [])


def plan_spec(path: str, tla: dict[str, str], ext_vars: dict[str, str], jpath: list[str],
              job: str | None, target: str = "k8s", runtimes: tuple[str, ...] = ()) -> JobPlan:
    """The spec's one job, planned as for the `k8s` target (its naming scheme and checks: the
    emulator runs what that target would run), or for `target` (a spec on a Trainer runtime: jobset)."""
    from .overrides import load_plans  # the compiler's, with `--set` edits applied first (overrides.py)

    plans = load_plans(path, tla=tla, ext_vars=ext_vars, jpath=jpath, targets=(target,), runtimes=runtimes)
    if job is not None:
        plans = [p for p in plans if p.name == job]
        if not plans:
            raise UsageError(f"{path}: no job named {job!r}")
    if len(plans) > 1:
        raise UsageError(f"{path} defines {len(plans)} jobs ({', '.join(p.name for p in plans)}); "
                         "choose one with --job NAME")
    return plans[0]


def load(path: str, *, tla: dict[str, str] | None = None, ext_vars: dict[str, str] | None = None,
         jpath: list[str] | None = None, job: str | None = None, secret_options: Iterable[str] = (),
         configmap_options: Iterable[str] = (), state_dir: str = ".trainspec",
         set_options: Iterable[str] = (), values_files: Iterable[str] = (), start_order: bool = False,
         check_missing: bool = True, namespace: str | None = None, env_files: Iterable[str] = (),
         env_options: Iterable[str] = (), runtimes: Iterable[str] = (),
         spec_on_runtime: Callable[[str, tuple[str, ...], str | None], tuple[list[dict], list[str]]] | None = None,
         spec_patched: Callable[[JobPlan], list[dict]] | None = None,
         ) -> JobModel:
    """The run model of the file at `path`. `start_order` (spec input only): wait for the roles
    the plan's start order names, as the compose and jobset targets do; by default a spec runs
    like its k8s output, every replica at once. `set_options` are a chart's `--set` values (a
    spec's are applied by overrides.using); `check_missing`: raise for missing Secrets and
    ConfigMaps (`trainspec run` reports them in preflight instead, with missing images).
    `namespace`: a chart's release namespace (`helm install -n`); other inputs carry their own.
    `runtimes`: --runtime FILE|DIR, Kubeflow Trainer runtimes for a TrainJob or a spec v1.3 job on a
    runtime; `spec_on_runtime(path, runtimes, job)`: the objects the Trainer controller creates for such
    a spec (the JobSet) and notes (a shipped runtime's definition used), handed in by the CLI, which may
    render a target (the emulator never does); `spec_patched(plan)`: the k8s output of a spec with
    `patches.k8s`, patches applied, which it then runs (without it, such a spec is refused: running its
    plan would drop the patches without a word)."""
    from . import helm

    secrets = parse_key_options(secret_options, "--secret")
    configmaps = parse_key_options(configmap_options, "--configmap")
    shown = path
    documents: list[Document] = []  # the file's, with positions (a chart's rendered objects have none)
    if helm.is_chart(path):  # a Helm chart folder: rendered, then read as the file it renders to
        docs: list[Any] | None = helm.render(path, values_files, set_options, namespace or "default")
        shown = f"{path} (Helm chart)"
    elif namespace is not None:
        raise UsageError(f"--namespace is a Helm chart folder's release namespace; {path} carries its own "
                         "(a spec's metadata.namespace, a compiled object's metadata.namespace)")
    elif list(values_files):
        raise UsageError(f"{path}: -f/--values is for a Helm chart folder")
    else:
        from ...inputs import chart_holding

        chart = chart_holding(path)
        if chart is not None:  # its templates are Go text, its values no objects: the chart runs, not a file of it
            raise UsageError(f"{path} is a file of the Helm chart {chart}; run the chart folder: "
                             f"trainspec run {chart}")
        if not path.endswith(".jsonnet"):
            documents = load_documents(path)
        docs = None if path.endswith(".jsonnet") else [d.data for d in documents]
    env_files, env_options = list(env_files), list(env_options)
    if (env_files or env_options) and not is_compose(docs):
        raise UsageError(f"{path}: --env-file and -e set compose interpolation variables; this is not a compose file")
    if start_order and not is_spec(path, docs):
        raise UsageError(f"{path}: --start-order is for a spec; a compiled file starts as its target orders it "
                         "(k8s.yaml: all at once; compose.yaml: depends_on)")
    spec = is_spec(path, docs)
    runtime_notes: list[str] = []
    runtimes = tuple(runtimes)
    given: tuple = ()
    if runtimes:
        from ...compiler.runtimes import load_runtimes

        given = load_runtimes(runtimes)
        documents = documents + [r.document for r in given]  # errors about a runtime: at its line:column
    if spec and docs and any(isinstance(d, dict) and isinstance(d.get("spec"), dict) and "trainjob" in d["spec"]
                             for d in docs):
        docs, runtime_notes = _on_runtime(path, docs, runtimes, job, spec_on_runtime)
        spec = False
    planned: JobPlan | None = None  # the spec's plan, when it was made here already
    if spec and (docs is None or _k8s_patched(docs)):  # a Jsonnet spec's patches are known once it is planned
        planned = plan_spec(path, tla or {}, ext_vars or {}, jpath or [], job)
        if planned.patches.get("k8s"):
            if spec_patched is None:
                raise UsageError("the spec has k8s patches, which only its compiled k8s objects carry", where=path,
                                 path="spec.patches.k8s", hint=f"run its k8s output: trainspec compile {path} "
                                 "-t k8s -o k8s.yaml && trainspec run k8s.yaml")
            docs, spec, planned = spec_patched(planned), False, None
            shown = f"{path} (its k8s output, spec.patches.k8s applied)"
    with reading(documents):  # errors about the file's fields at their line:column (positions.py)
        variables = None
        if docs and is_compose(docs):  # interpolated first, as Compose does: the checks see the values given
            from .compose import interpolated

            docs[0], variables = interpolated(docs[0], path, env_files, env_options)
        notes = _check(docs, shown) if docs and not spec else []
        try:
            model = _read(path, shown, docs, planned if spec else None, tla, ext_vars, jpath, job, secrets,
                          configmaps, state_dir, start_order, variables, given, spec)
        except FieldError as exc:  # a model check (security, ports) about a field of the file: at its line
            raise located(exc) from None
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            if spec:
                raise
            # A shape the checks do not describe: still bad input, never an internal error.
            raise UsageError(f"a field has a type or value the emulator cannot read "
                             f"({type(exc).__name__}: {neutralise(str(exc)[:200])})", where=shown,
                             hint="check the file against the Kubernetes API reference") from None
    check_run_size(len(model.replicas), shown)
    model.notes += runtime_notes + notes
    if check_missing:  # `trainspec run` reports them in preflight, with missing images, all at once
        missing_objects_error(model)
    return model


def _check(docs: list[Any], shown: str) -> list[str]:
    """Field types and counts, before any reader or controller expands them; then what the emulator
    refuses or runs without (notes)."""
    from . import unhonoured

    if is_compose(docs):
        check_compose(docs[0], shown)
        return unhonoured.compose_fields(docs[0], shown)
    check_documents(docs, shown)
    return unhonoured.k8s_fields(docs, shown)


def _read(path: str, shown: str, docs: list[Any] | None, planned: JobPlan | None, tla, ext_vars, jpath, job,
          secrets, configmaps, state_dir: str, start_order: bool, variables: dict[str, str] | None,
          runtimes: tuple = (), spec: bool = False) -> JobModel:
    """`spec`: the input is a spec, planned here (not once its objects were made for it: a runtime's JobSet,
    its patched k8s output), unless `planned` is its plan already; `variables`: a compose file's, which
    `docs` is already interpolated with."""
    from . import operator, suspension

    if docs and operator.is_operator_input(docs):  # kubeflow, volcano, jobset: the controller's pods
        model = operator.from_operator(docs, shown, state_dir, job, secrets, configmaps, runtimes)
        model.notes += suspension.check(docs, shown)
        return model
    if spec:
        plan = planned or plan_spec(path, tla or {}, ext_vars or {}, jpath or [], job)
        if plan.framework == "mpi" and f"{plan.name}-ssh" not in secrets:
            secrets[f"{plan.name}-ssh"] = ssh_keypair()
        model = from_plan(plan, state_dir=state_dir, secrets=secrets, configmaps=configmaps,
                          start_order=start_order, source=path)
    elif is_compose(docs):
        from .compose import from_compose

        assert docs is not None and variables is not None  # is_compose: one mapping, interpolated by load()
        return from_compose(docs[0], path, state_dir, variables=variables)
    else:
        objects = [d for d in docs or [] if isinstance(d, dict)]
        if not objects:
            raise UsageError(f"{path}: empty; name a spec, a compiled file (k8s, compose, kubeflow, volcano, jobset, "
                             "trainjob) or a chart folder")
        add_ssh_secrets(objects, secrets)
        model = from_k8s(objects, source=shown, state_dir=state_dir, job=job, secrets=secrets,
                         configmaps=configmaps)
        model.notes += suspension.check(objects, shown)
    return model


def _k8s_patched(docs: list[Any]) -> bool:
    """A YAML spec with `spec.patches.k8s` ops (a Jsonnet spec's are seen once it is planned)."""
    return any(isinstance(d, dict) and isinstance(d.get("spec"), dict) and isinstance(d["spec"].get("patches"), dict)
               and d["spec"]["patches"].get("k8s") for d in docs)


def _on_runtime(path: str, docs: list[Any], runtimes: tuple[str, ...], job: str | None,
                spec_on_runtime: Callable[[str, tuple[str, ...], str | None], tuple[list[dict], list[str]]] | None,
                ) -> tuple[list[Any], list[str]]:
    """A spec v1.3 job on a Trainer runtime runs as the JobSet the Trainer controller makes of its TrainJob
    and the runtime (given with --runtime, or one Trainer ships): those objects, read as a jobset file is,
    and the notes planning it gave."""
    from ...compiler.runtimes import how_to_give, ref_of, shipped

    ref = next(d["spec"]["trainjob"].get("runtime") or {} for d in docs if isinstance(d, dict)
               and isinstance(d.get("spec"), dict) and isinstance(d["spec"].get("trainjob"), dict))
    kind, name = ref_of(ref if isinstance(ref, dict) else {})
    if spec_on_runtime is None or not (runtimes or shipped(kind, name)):
        raise UsageError(f"the job runs on the cluster's {kind} {name!r}: its pods are that runtime's, "
                         "which the emulator needs", where=path, path="spec.trainjob.runtime",
                         hint=how_to_give(kind, name))
    return spec_on_runtime(path, runtimes, job)


def missing_objects_error(model: JobModel) -> None:
    """Secrets/ConfigMaps a cluster would have but the file does not: say how to give them."""
    for kind, missing, flag in (("Secret", model.secret_missing, "--secret"),
                                ("ConfigMap", model.configmap_missing, "--configmap")):
        if len(missing) == 1:
            name, where = next(iter(missing.items()))
            raise UsageError(f"{kind} {name!r} is not in {model.source}", where=where,
                             hint=f"supply it with {flag} {name}=PATH (a directory of key files, or a KEY=VALUE env "
                                  f"file) or {flag} {name}:KEY=VALUE")
        if missing:
            listed = "; ".join(f"{name!r} (used by {where})" for name, where in missing.items())
            raise UsageError(f"{kind}s not in {model.source}: {listed}",
                             hint=f"supply each with {flag} NAME=PATH (a directory of key files, or a KEY=VALUE env "
                                  f"file) or {flag} NAME:KEY=VALUE")
