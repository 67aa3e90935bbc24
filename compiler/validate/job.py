"""Spec v1/v1.1 validation: loaded data in, a `JobSpec` out, every problem reported at once.

The job level is here (apiVersion, kind, metadata, spec); the roles' rules are in roles.py and what a
container is made of in container.py, both mixed into the one validator; the field names each level
allows are in field_names.py."""

from __future__ import annotations

from .. import fields as F
from ..errors import ErrorSink
from ..fields import API_VERSIONS, KIND
from ..kube import DNS1035_LABEL, DNS1123_LABEL, GENERATED_SUFFIX, MAX_NAME, generated_name
from ..kube_rules import (
    JOB_SELECTOR_LABELS,
    KEY_EXPECTED,
    VALUE_EXPECTED,
    applies,
    job_name_ok,
    label_value_problem,
    qualified_name_problem,
)
from ..loader import Document
from ..model import DEFAULT_PORT, JobSpec
from ..reader import Reader
from . import elastic as elastic_rules
from . import patches as patch_rules
from . import pod
from . import scheduling as scheduling_rules
from . import trainjob as trainjob_rules
from .field_names import ALL_SPEC_FIELDS, FRAMEWORK_BLOCKS, METADATA_FIELDS, TOP_FIELDS
from .roles import RoleRules, article


def validate(doc: Document, kube_version: tuple[int, int] = (1, 30)) -> tuple[JobSpec | None, ErrorSink]:
    """Check one document against the rules of Kubernetes `kube_version`; the spec is None when the sink
    holds errors."""
    sink = ErrorSink(doc.file, doc.positions, doc.key_positions)
    spec = _Validator(Reader(sink, kube_version), doc.file).job(doc.data)
    return spec if not sink.errors else None, sink


def _api_version_hint(api) -> str:
    """'trainspec.dev/v1', 'TrainSpec/v1' -> did you mean 'trainspec/v1'?"""
    if not isinstance(api, str):
        return f"did you mean {API_VERSIONS[-1]!r}?"
    wanted = "trainspec/" + api.rpartition("/")[2].strip().lower()
    if wanted in API_VERSIONS:
        return f"did you mean {wanted!r}?"
    import difflib

    close = difflib.get_close_matches(api.lower(), API_VERSIONS, n=1, cutoff=0.5)
    return f"did you mean {(close or API_VERSIONS[-1:])[0]!r}?"


class _Validator(RoleRules):
    def __init__(self, reader: Reader, source: str):
        self.r = reader
        self.source = source
        self.written_roles: set[str] = set()
        self.framework: str | None = None
        self.generate_name: str | None = None  # v1.3 metadata.generateName, when valid
        self.on_runtime = False  # v1.3 spec.trainjob: the pods are a Trainer runtime's, the spec overrides them

    # --- top level -------------------------------------------------------------------
    def job(self, data) -> JobSpec | None:
        r = self.r
        top = r.mapping(data, (), TOP_FIELDS, required=F.TOP.required, what="a TrainingJob")
        if top is None:
            return None
        api = top.get("apiVersion")
        if api is not None and api not in API_VERSIONS:
            r.error(("apiVersion",), f"{api!r} is not supported", " or ".join(map(repr, API_VERSIONS)),
                    _api_version_hint(api))
        kind = top.get("kind")
        if kind is not None and kind != KIND:
            import difflib  # only for the hint: not imported by a clean compile

            close = isinstance(kind, str) and (kind.lower() == KIND.lower()
                                               or difflib.get_close_matches(kind, (KIND,), n=1, cutoff=0.6))
            r.error(("kind",), f"{kind!r} is not supported", repr(KIND),
                    f"did you mean {KIND!r}?" if close else f"a trainspec spec is always kind: {KIND}")
        meta = r.mapping(top.get("metadata"), ("metadata",), METADATA_FIELDS, required=F.METADATA.required) or {}
        name = self.job_name(meta.get("name"))
        self.generate_name = self.name_prefix(meta.get("generateName"))
        if "name" in meta and "generateName" in meta:
            r.error(("metadata", "generateName"), "set together with metadata.name", "exactly one of name and "
                    "generateName", "keep name for a fixed name, generateName for a new name each apply",
                    at_key=True)
            name = None
        elif "generateName" in meta:
            name = self.generate_name.rstrip("-") if self.generate_name else None
        elif "name" not in meta and isinstance(top.get("metadata"), dict):
            r.error(("metadata",), "neither name nor generateName is set", "exactly one of name and generateName",
                    "name: my-job (or generateName: my-job- for a new name each apply)")
        namespace = "default"
        if meta.get("namespace") is not None:
            ns = r.string(meta["namespace"], ("metadata", "namespace"))
            if ns is not None and (len(ns) > 63 or not DNS1123_LABEL.match(ns)):
                r.error(("metadata", "namespace"), f"{ns!r} is not a valid namespace",
                        "a DNS-1123 label: lower-case letters, digits and '-', at most 63 characters")
            namespace = ns or namespace
        labels = self.string_map(meta.get("labels"), ("metadata", "labels"), labels=True)
        annotations = self.string_map(meta.get("annotations"), ("metadata", "annotations"), labels=False)

        spec = r.mapping(top.get("spec"), ("spec",), ALL_SPEC_FIELDS, required=F.SPEC.required) or {}
        return self.job_spec(spec, name, namespace, labels, annotations)

    def job_name(self, value) -> str | None:
        path = ("metadata", "name")
        if value is None:
            return None
        name = self.r.string(value, path)
        if name is None:
            return None
        if not job_name_ok(name, self.r.kube_version):
            fixed = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
            if applies("service-name-dns1123", self.r.kube_version):
                self.r.error(path, f"{name!r} is not a DNS-1123 label", "lower-case letters, digits and '-', at most "
                             "63, starting and ending alphanumeric (it names the job's headless Service)",
                             f"try {fixed[:63]!r}" if fixed and job_name_ok(fixed[:63], self.r.kube_version) else "")
                return None
            hint = f"try {fixed!r}" if fixed and DNS1035_LABEL.match(fixed) else ""
            if DNS1123_LABEL.match(name):
                hint = ("Kubernetes 1.36 accepts a Service name starting with a digit (RelaxedServiceNameValidation): "
                        "--kube-version 1.36" + (f", or {hint}" if hint else ""))
            self.r.error(path, f"{name!r} is not a DNS-1035 label",
                         "lower-case letters, digits and '-', starting with a letter", hint)
            return None
        return name

    def name_prefix(self, value) -> str | None:
        """metadata.generateName: valid when the API server takes it (its last '-' masked, as
        apimachinery's ValidateObjectMeta checks a prefix) and when every name made from it is a job name:
        the prefix without its trailing '-' (`build`) and the longest generated one (`apply`)."""
        path = ("metadata", "generateName")
        if value is None:
            return None
        prefix = self.r.string(value, path)
        if prefix is None:
            return None
        masked = prefix[:-1] + "a" if prefix.endswith("-") else prefix
        base = prefix.rstrip("-")
        if (len(prefix) > MAX_NAME or not job_name_ok(masked, self.r.kube_version) or not base
                or not job_name_ok(generated_name(prefix, "x" * GENERATED_SUFFIX), self.r.kube_version)):
            fixed = "".join(c if c.isalnum() else "-" for c in prefix.lower()).strip("-")[:MAX_NAME - 1]
            self.r.error(path, f"{prefix!r} is not a valid generateName",
                         f"a prefix of a DNS-1035 label: lower-case letters, digits and '-', starting with a letter, "
                         f"at most {MAX_NAME} characters (the API server adds {GENERATED_SUFFIX} random ones)",
                         f"try {fixed + '-'!r}" if fixed and DNS1035_LABEL.match(fixed) else "")
            return None
        return prefix

    def string_map(self, value, path: tuple, labels: bool) -> tuple[tuple[str, str], ...]:
        if value is None:
            return ()
        mapping = self.r.mapping(value, path, tuple(value) if isinstance(value, dict) else (), what="strings")
        if mapping is None:
            return ()
        out = []
        for key, item in mapping.items():
            problem = qualified_name_problem(key)
            if problem:
                self.r.error(path + (key,), f"key {key!r} is not a valid {'label' if labels else 'annotation'} key: "
                             f"{problem}", KEY_EXPECTED, at_key=True)
                continue
            if key.startswith(("trainspec.dev/", "app.kubernetes.io/")):
                self.r.error(path + (key,), f"key {key!r} is set by trainspec", "a key of your own",
                             "choose another prefix", at_key=True)
                continue
            if labels and key in JOB_SELECTOR_LABELS:
                self.r.error(path + (key,), f"label {key!r} is the Job controller's own", "a key of your own",
                             "Kubernetes sets it on every Job's pods and selects them by it: a value of yours would "
                             "break the Job's selector (`selector` does not match template `labels`)", at_key=True)
                continue
            text = self.r.string(item, path + (key,), non_empty=False)
            if text is None:
                continue
            problem = label_value_problem(text) if labels else None
            if problem:
                self.r.error(path + (key,), f"{text!r} is not a valid label value: {problem}", VALUE_EXPECTED)
                continue
            out.append((key, text))
        return tuple(out)

    def job_spec(self, spec: dict, name, namespace, labels, annotations) -> JobSpec | None:
        r = self.r
        self.on_runtime = spec.get("trainjob") is not None
        framework = None
        if spec.get("framework") is not None:
            framework = r.choice(spec["framework"], ("spec", "framework"), F.SPEC.enum("framework"))
        self.framework = framework
        image = self.opt_image(spec, ("spec",))
        command = self.opt_list(spec, "command", ("spec",))
        args = self.opt_list(spec, "args", ("spec",))
        working_dir = self.opt_path(spec, "workingDir", ("spec",))
        env = self.env(spec.get("env"), ("spec", "env"))
        volumes = self.volumes(spec.get("volumes"), ("spec", "volumes"))
        accelerator = "nvidia.com/gpu"
        if spec.get("accelerator") is not None:
            acc = r.string(spec["accelerator"], ("spec", "accelerator"))
            if acc is not None:
                problem = qualified_name_problem(acc)
                if problem or "/" not in acc:
                    r.error(("spec", "accelerator"), f"{acc!r} is not an extended resource name",
                            "a name like nvidia.com/gpu or huawei.com/Ascend910", problem or "")
                else:
                    accelerator = acc
        restart = self.opt_choice(spec, "restartPolicy", ("spec",), F.SPEC.enum("restartPolicy"))
        backoff = self.opt_int(spec, "backoffLimit", ("spec",), *F.SPEC.bounds("backoffLimit"))
        deadline = self.opt_int(spec, "activeDeadlineSeconds", ("spec",), *F.SPEC.bounds("activeDeadlineSeconds"))
        ttl = self.opt_int(spec, "ttlSecondsAfterFinished", ("spec",), *F.SPEC.bounds("ttlSecondsAfterFinished"))
        clean = self.opt_choice(spec, "cleanPodPolicy", ("spec",), F.SPEC.enum("cleanPodPolicy"))
        port = self.opt_int(spec, "port", ("spec",), *F.SPEC.bounds("port"))

        success_policy = nproc = slots = elastic = None
        implementation, ssh_path = "OpenMPI", "/root/.ssh"
        for block in FRAMEWORK_BLOCKS:
            if block in spec and spec[block] is not None and framework is not None and block != framework:
                r.error(("spec", block), f"a {block} block in {article(framework)} {framework} job",
                        f"only spec.{framework}",
                        "remove it, or change spec.framework", at_key=True)
        if framework and spec.get(framework) is not None:
            path = ("spec", framework)
            options: dict = r.mapping(spec[framework], path, FRAMEWORK_BLOCKS[framework]) or {}
            if framework == "tensorflow" and options.get("successPolicy") is not None:
                success_policy = r.choice(options["successPolicy"], path + ("successPolicy",),
                                          F.MAPPINGS["tensorflow"].enum("successPolicy"))
            if framework == "pytorch" and options.get("nprocPerNode") is not None:
                nproc = self.r.nproc(options["nprocPerNode"], path + ("nprocPerNode",))
            if framework == "pytorch" and "elastic" in options:
                elastic = elastic_rules.elastic(self, options["elastic"], path + ("elastic",))
            if framework == "mpi":
                slots = self.opt_int(options, "slotsPerWorker", path, *F.MAPPINGS["mpi"].bounds("slotsPerWorker"))
                implementation = self.opt_choice(options, "implementation", path,
                                                 F.MAPPINGS["mpi"].enum("implementation")) or "OpenMPI"
                ssh_path = self.opt_path(options, "sshAuthMountPath", path) or ssh_path
        pod_settings = pod.pod_settings(self, spec, ("spec",), role=False)
        pull_secrets = pod.pull_secrets(r, spec["imagePullSecrets"], ("spec", "imagePullSecrets")) \
            if spec.get("imagePullSecrets") is not None else ()
        patches = patch_rules.patches(self, spec["patches"], ("spec", "patches")) \
            if spec.get("patches") is not None else {}

        container_name = self.opt_label(spec, "containerName", ("spec",))
        roles = self.roles(spec.get("roles"), framework, accelerator)
        success = self.success(spec.get("success"), framework, roles)
        scheduling = scheduling_rules.scheduling(self.r, spec.get("scheduling"), sum(role.replicas for role in roles))
        if framework and roles:
            self.framework_rules(framework, roles, elastic)
            for role in roles:
                pod.pod_conflicts(r, framework, volumes, role.name, role.volumes, bool(role.resources.shm), ssh_path)
                self.container_conflicts(role, container_name)
            self.task_names(roles)
            if image is None and spec.get("trainjob") is None:  # v1.3: a Trainer runtime has its image
                for role in roles:
                    if role.image is None:
                        r.error(("spec", "roles", role.name), f"role {role.name!r} has no image",
                                "spec.image or spec.roles.<role>.image")
        if name and roles:
            self.name_lengths(name, roles)
        on_runtime = trainjob_rules.trainjob(r, spec.get("trainjob"))
        if on_runtime is not None and on_runtime.num_proc_per_node is not None and nproc is not None:
            r.error(("spec", "trainjob", "numProcPerNode"), "set twice (spec.pytorch.nprocPerNode too)",
                    "one of them", "keep spec.pytorch.nprocPerNode", at_key=True)
        if name is None or framework is None:
            return None
        return JobSpec(
            source=self.source, name=name, namespace=namespace, labels=labels, annotations=annotations,
            framework=framework, image=image, command=command, args=args, working_dir=working_dir, env=env,
            volumes=volumes, accelerator=accelerator, restart_policy=restart, backoff_limit=backoff,
            active_deadline_seconds=deadline, ttl_seconds_after_finished=ttl, clean_pod_policy=clean,
            scheduling=scheduling, port=port, success_policy=success_policy, nproc_per_node=nproc,
            slots_per_worker=slots, mpi_implementation=implementation, roles=tuple(roles), pod=pod_settings,
            image_pull_secrets=pull_secrets, elastic=elastic, ssh_auth_mount_path=ssh_path, patches=patches,
            container_name=container_name, success=success, trainjob=on_runtime, generate_name=self.generate_name)



def default_port(framework: str) -> int:
    return DEFAULT_PORT[framework]
