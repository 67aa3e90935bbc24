"""Spec v1/v1.1 validation: loaded data in, a `JobSpec` out, every problem reported at once."""

from __future__ import annotations

from .. import fields as F
from ..errors import ErrorSink
from ..fields import API_VERSIONS, KIND
from ..kube import (
    DNS1035_LABEL,
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    GENERATED_SUFFIX,
    MAX_NAME,
    generated_name,
)
from ..kube_rules import (
    JOB_SELECTOR_LABELS,
    KEY_EXPECTED,
    VALUE_EXPECTED,
    applies,
    backsteps_problem,
    env_name_problem,
    job_name_ok,
    label_value_problem,
    qualified_name_problem,
)
from ..loader import Document
from ..model import (
    DEFAULT_PORT,
    FRAMEWORKS,
    GENERIC,
    GENERIC_CONTAINER,
    MAX_REPLICAS,
    ROLE_LIMITS,
    ROLE_ORDER,
    GenericSuccess,
    InitContainer,
    JobSpec,
    Resources,
    RoleSpec,
    Volume,
)
from ..reader import Reader, type_name
from . import elastic as elastic_rules
from . import patches as patch_rules
from . import pod
from . import probes as parts
from . import scheduling as scheduling_rules
from . import trainjob as trainjob_rules

# Allowed and required keys, enums and bounds come from the field table (compiler/fields.py),
# which `trainspec schema` also writes as JSON Schema.
TOP_FIELDS = F.TOP.names
METADATA_FIELDS = F.METADATA.names
SPEC_FIELDS = F.SPEC.names
ROLE_FIELDS = F.ROLE.names
# also read (not in the table): keys written at the wrong level, reported with where they belong
ALL_SPEC_FIELDS, ALL_ROLE_FIELDS = SPEC_FIELDS + pod.ROLE_ONLY_FIELDS, ROLE_FIELDS + pod.JOB_ONLY_FIELDS
RESOURCE_FIELDS = F.MAPPINGS["resources"].names
VOLUME_FIELDS = F.MAPPINGS["volume"].names
VOLUME_SOURCES = F.MAPPINGS["volumeSource"].exactly_one
INIT_FIELDS = F.MAPPINGS["initContainer"].names
FRAMEWORK_BLOCKS = F.FRAMEWORK_BLOCKS
RESERVED_ENV_PREFIX = "TRAINSPEC_"


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


class _Validator:
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

    # --- roles -----------------------------------------------------------------------
    def roles(self, value, framework: str | None, accelerator: str = "nvidia.com/gpu") -> list[RoleSpec]:
        r = self.r
        path = ("spec", "roles")
        if value is None:
            return []
        allowed = ROLE_ORDER.get(framework or "", ())
        mapping = r.mapping(value, path, tuple(value) if isinstance(value, dict) else (), what="roles")
        if mapping is None:
            return []
        if not mapping:
            r.error(path, "has no roles", "at least one role" + (f" of {', '.join(allowed)}" if allowed else ""))
        self.written_roles = set(mapping)  # a role written but invalid is not also reported missing
        out = []
        for role_name, body in mapping.items():
            if framework == GENERIC:
                if len(role_name) > 63 or not DNS1123_LABEL.match(role_name):
                    r.error(path + (role_name,), f"{role_name!r} is not a valid role name",
                            "a DNS-1123 label: lower-case letters, digits and '-', at most 63 characters",
                            at_key=True)
                    continue
            elif framework and role_name not in allowed:
                import difflib

                close = difflib.get_close_matches(role_name, allowed, n=1, cutoff=0.5)
                hint = f"did you mean {close[0]!r}?" if close else f"{framework} roles are {', '.join(allowed)}"
                r.error(path + (role_name,), f"{role_name!r} is not a {framework} role", "one of " + ", ".join(allowed),
                        hint, at_key=True)
                continue
            role = self.role(role_name, body, path + (role_name,), accelerator)
            if role is not None:
                out.append(role)
        order = {name: i for i, name in enumerate(allowed)}
        out.sort(key=lambda role: order.get(role.name, len(order)))
        return out

    def role(self, name: str, body, path: tuple, accelerator: str = "nvidia.com/gpu") -> RoleSpec | None:
        r = self.r
        body = r.mapping(body, path, ALL_ROLE_FIELDS, required=F.ROLE.required)
        if body is None:
            return None
        replicas = None
        if body.get("replicas") is not None:
            replicas = r.integer(body["replicas"], path + ("replicas",), *F.ROLE.bounds("replicas"))
        resources = self.resources(body.get("resources"), path + ("resources",), accelerator)
        role = RoleSpec(
            name=name,
            replicas=replicas if replicas is not None else 0,
            image=self.opt_image(body, path),
            command=self.opt_list(body, "command", path),
            args=self.opt_list(body, "args", path),
            working_dir=self.opt_path(body, "workingDir", path),
            env=self.env(body.get("env"), path + ("env",)),
            restart_policy=self.opt_choice(body, "restartPolicy", path, F.ROLE.enum("restartPolicy")),
            resources=resources,
            init_containers=self.init_containers(body.get("initContainers"), path + ("initContainers",)),
            lifecycle=parts.lifecycle(self.r, body.get("lifecycle"), path + ("lifecycle",)),
            probes=parts.probes(self.r, body.get("probes"), path + ("probes",)),
            port=self.opt_int(body, "port", path, *F.ROLE.bounds("port")),
            volumes=self.volumes(body.get("volumes"), path + ("volumes",)),
            pod=pod.pod_settings(self, body, path, role=True),
            task_name=self.opt_label(body, "taskName", path),
            container_name=self.opt_label(body, "containerName", path),
        )
        return role if replicas is not None else None

    def opt_label(self, body: dict, key: str, path: tuple) -> str | None:
        """A name that is a DNS-1123 label (v1.2's taskName and containerName)."""
        value = self.opt_string(body, key, path)
        if value is not None and (len(value) > 63 or not DNS1123_LABEL.match(value)):
            self.r.error(path + (key,), f"{value!r} is not a valid {key}",
                         "a DNS-1123 label: lower-case letters, digits and '-', at most 63 characters")
            return None
        return value

    def success(self, value, framework: str | None, roles: list[RoleSpec]) -> GenericSuccess | None:
        """spec.success: generic jobs only (the other frameworks' rule is their operator's)."""
        r = self.r
        path = ("spec", "success")
        if value is None:
            return None
        if framework is not None and framework != GENERIC:
            r.error(path, f"success in {article(framework)} {framework} job", "only in a generic job",
                    "the operator's rule decides (docs/spec.md, Success rule)"
                    + ("; see spec.tensorflow.successPolicy" if framework == "tensorflow" else ""), at_key=True)
            return None
        mapping = F.MAPPINGS["success"]
        body = r.mapping(value, path, mapping.names, required=mapping.required)
        if body is None or body.get("role") is None:
            return None
        role = r.string(body["role"], path + ("role",))
        policy = self.opt_choice(body, "policy", path, mapping.enum("policy")) or "AllReplicas"
        if role is None:
            return None
        names = [x.name for x in roles]
        if role not in names:
            if role not in self.written_roles:
                import difflib

                close = difflib.get_close_matches(role, names, n=1, cutoff=0.5)
                r.error(path + ("role",), f"{role!r} is not a role of this job", "one of " + ", ".join(names),
                        f"did you mean {close[0]!r}?" if close else "")
            return None
        if next(x for x in roles if x.name == role).replicas == 0:
            r.error(path + ("role",), f"role {role!r} has 0 replicas and decides success",
                    "a role with at least one replica", "give it replicas, or choose another role")
            return None
        return GenericSuccess(role, policy)

    def container_conflicts(self, role: RoleSpec, job_container: str | None) -> None:
        """The main container's name may not be an init container's (one pod, unique names)."""
        name = role.container_name or job_container or (GENERIC_CONTAINER if self.framework == GENERIC else None)
        if name is None:
            return
        for i, init in enumerate(role.init_containers):
            if init.name == name:
                where = ("spec", "roles", role.name, "containerName") if role.container_name else ("spec",
                                                                                                 "containerName")
                self.r.error(("spec", "roles", role.name, "initContainers", i, "name"),
                             f"init container {name!r} has the main container's name ({'.'.join(map(str, where))})",
                             "unique container names in a pod")

    def task_names(self, roles: list[RoleSpec]) -> None:
        """Task names (a role's taskName, else its name) are unique in the job: one task per name."""
        seen: dict[str, str] = {}
        for role in roles:
            name = role.task_name or role.name
            if name in seen:
                path = ("spec", "roles", role.name, "taskName") if role.task_name else ("spec", "roles", role.name)
                self.r.error(path, f"task name {name!r} is also role {seen[name]!r}'s",
                             "a task name (taskName, else the role's name) unique in the job",
                             "choose another taskName", at_key=not role.task_name)
            else:
                seen[name] = role.name

    def framework_rules(self, framework: str, roles: list[RoleSpec], elastic=None) -> None:
        r = self.r
        counts = {role.name: role.replicas for role in roles}
        limits = dict(ROLE_LIMITS[framework])
        if framework == "pytorch" and elastic is not None:
            limits["master"] = (0, 1)  # elastic torchrun: workers rendezvous among themselves
            elastic_rules.elastic_rules(r, elastic, counts.get("worker", 0))
        for role_name, (low, high) in limits.items():
            count = counts.get(role_name)
            path = ("spec", "roles", role_name, "replicas") if role_name in counts else ("spec", "roles")
            if count is None:
                if low > 0 and role_name not in self.written_roles:
                    r.error(path, f"{article(framework)} {framework} job needs a {role_name!r} role",
                            f"{'exactly one' if high == 1 else 'at least one'} {role_name} replica",
                            f"add roles.{role_name}: {{replicas: 1}}")
                continue
            if count < low or (high is not None and count > high):
                want = f"exactly {low}" if low == high else (f"at most {high}" if high is not None and count > high
                                                              else f"at least {low}")
                r.error(path, f"{count} {role_name} replicas in a {framework} job", f"{want} {role_name} replica(s)")
        total = sum(counts.values())
        if framework == GENERIC and counts and total == 0:
            r.error(("spec", "roles"), "0 replicas in all", "at least one replica in the job")
        if total > MAX_REPLICAS:
            r.error(("spec", "roles"), f"{total} replicas in all", f"at most {MAX_REPLICAS}")
        if framework == "paddle" and counts.get("master") == 0:  # PS mode with no master: rendezvous at nobody
            r.error(("spec", "roles", "master", "replicas"), "0 master replicas in a paddle job",
                    "at least 1 master replica (PS mode)", "remove roles.master for collective mode")
        if framework == "tensorflow" and not (self.written_roles & set(ROLE_ORDER[framework])) - set(counts):
            if counts.get("ps", 0) > 0 and counts.get("worker", 0) == 0:
                r.error(("spec", "roles", "ps"), "parameter servers without workers",
                        "a worker role with at least one replica", "add roles.worker")
            if counts.get("chief", 0) + counts.get("worker", 0) == 0:
                r.error(("spec", "roles"), "no chief and no worker replica", "a chief or at least one worker")

    def name_lengths(self, name: str, roles: list[RoleSpec]) -> None:
        field = "name"
        if self.generate_name is not None:  # the longest name `apply` can generate from the prefix
            field, name = "generateName", generated_name(self.generate_name, "x" * GENERATED_SUFFIX)
        for role in roles:
            longest = f"{name}-{max(role.name, role.task_name or '', key=len)}-{max(role.replicas - 1, 0)}"
            if len(longest) > MAX_NAME:
                room = MAX_NAME - (len(longest) - len(name))
                if field == "generateName":
                    room -= GENERATED_SUFFIX
                self.r.error(("metadata", field), f"generated name {longest!r} is {len(longest)} characters",
                             f"every generated name within {MAX_NAME} characters",
                             f"shorten metadata.{field} to at most {room} characters")
                return

    # --- fields ----------------------------------------------------------------------
    def opt_string(self, body: dict, key: str, path: tuple) -> str | None:
        return self.r.string(body[key], path + (key,)) if body.get(key) is not None else None

    def opt_image(self, body: dict, path: tuple) -> str | None:
        image = self.opt_string(body, "image", path)
        if image is not None and image != image.strip():
            # Kubernetes refuses it ("must not have leading or trailing whitespace").
            self.r.error(path + ("image",), f"{image!r} has leading or trailing whitespace", "an image reference",
                         "remove the spaces")
            return None
        return image

    def opt_list(self, body: dict, key: str, path: tuple) -> tuple[str, ...] | None:
        if body.get(key) is None:
            return None
        example = "[python, train.py]" if key == "command" else '[--epochs, "5"]'
        return self.r.string_list(body[key], path + (key,), example=example)

    def opt_path(self, body: dict, key: str, path: tuple) -> str | None:
        value = self.opt_string(body, key, path)
        if value is not None and not value.startswith("/"):
            self.r.error(path + (key,), f"{value!r} is not an absolute path", "a path starting with /")
            return None
        return value

    def opt_choice(self, body: dict, key: str, path: tuple, choices) -> str | None:
        return self.r.choice(body[key], path + (key,), choices) if body.get(key) is not None else None

    def opt_int(self, body: dict, key: str, path: tuple, low: int | None, high: int | None) -> int | None:
        return self.r.integer(body[key], path + (key,), low, high) if body.get(key) is not None else None

    def quantity(self, value, path: tuple, example: str) -> str | None:
        return self.r.quantity(value, path, example)

    def resources(self, value, path: tuple, accelerator: str = "nvidia.com/gpu") -> Resources:
        body = self.r.mapping(value, path, RESOURCE_FIELDS) or {}
        cpu = self.quantity(body["cpu"], path + ("cpu",), '"500m" or "4"') if body.get("cpu") is not None else None
        memory = self.quantity(body["memory"], path + ("memory",), "8Gi") if body.get("memory") is not None else None
        shm = self.quantity(body["shm"], path + ("shm",), "2Gi") if body.get("shm") is not None else None
        gpu_bounds = F.MAPPINGS["resources"].bounds("gpu")
        gpu = self.r.integer(body["gpu"], path + ("gpu",), *gpu_bounds) if body.get("gpu") is not None else 0
        requests, limits = pod.resource_maps(self, body, path, cpu, memory, gpu or 0, (accelerator,))
        return Resources(cpu=cpu, memory=memory, gpu=gpu or 0, shm=shm, requests=requests, limits=limits)

    def env(self, value, path: tuple) -> tuple[tuple[str, object], ...]:
        r = self.r
        if value is None:
            return ()
        if isinstance(value, list):
            r.error(path, "is a list", "a mapping of NAME: value", "write env as a map, e.g. env: {LOG_LEVEL: info}")
            return ()
        mapping = r.mapping(value, path, tuple(value) if isinstance(value, dict) else (), what="NAME: value")
        if mapping is None:
            return ()
        out = []
        for name, item in mapping.items():
            item_path = path + (name,)
            problem = env_name_problem(name, r.kube_version)
            if problem:
                relaxed = env_name_problem(name, (1, 32)) is None
                r.error(item_path, f"{name!r} is not a valid environment variable name", problem,
                        "Kubernetes 1.32 and later accept it (RelaxedEnvironmentVariableValidation): "
                        "--kube-version 1.32" if relaxed else "", at_key=True)
                continue
            if name.startswith(RESERVED_ENV_PREFIX):
                r.error(item_path, f"{name!r} is set by trainspec", "a name not starting with TRAINSPEC_", at_key=True)
                continue
            if isinstance(item, dict):
                ref = pod.env_ref(r, item, item_path)
                if ref is not None:
                    out.append((name, ref))
                continue
            text = r.string(item, item_path, non_empty=False)
            if text is not None:
                out.append((name, text))
        return tuple(out)

    def volumes(self, value, path: tuple) -> tuple[Volume, ...]:
        r = self.r
        if value is None:
            return ()
        if not isinstance(value, list):
            r.error(path, f"is {type_name(value)}", "a list of volumes")
            return ()
        out: list[Volume] = []
        names: set[str] = set()
        mounts: set[str] = set()
        for i, item in enumerate(value):
            vp = path + (i,)
            required = F.MAPPINGS["volume"].required
            body = r.mapping(item, vp, VOLUME_FIELDS, required=required)
            if body is None or any(body.get(k) is None for k in required):
                continue
            name = r.string(body["name"], vp + ("name",))
            if name is not None and (len(name) > 63 or not DNS1123_LABEL.match(name)):
                r.error(vp + ("name",), f"{name!r} is not a valid volume name", "a DNS-1123 label")
                name = None
            if name in names:
                r.error(vp + ("name",), f"volume name {name!r} is used twice", "unique volume names")
            mount = r.string(body["mountPath"], vp + ("mountPath",))
            if mount is not None and not mount.startswith("/"):
                r.error(vp + ("mountPath",), f"{mount!r} is not an absolute path", "a path starting with /")
                mount = None
            if mount in mounts:
                r.error(vp + ("mountPath",), f"mount path {mount!r} is used twice", "unique mount paths")
            read_only = r.boolean(body["readOnly"], vp + ("readOnly",)) if body.get("readOnly") is not None else False
            source = self.volume_source(body["source"], vp + ("source",))
            if name and mount and source and read_only is not None:
                names.add(name)
                mounts.add(mount)
                kind, src, medium, size = source
                out.append(Volume(name, mount, read_only, kind, src, medium, size))
        return tuple(out)

    def volume_source(self, value, path: tuple):
        r = self.r
        body = r.mapping(value, path, VOLUME_SOURCES)
        if body is None:
            return None
        if len(body) != 1:
            r.error(path, f"has {len(body)} sources", "exactly one of " + ", ".join(VOLUME_SOURCES))
            return None
        kind, spec = next(iter(body.items()))
        kp = path + (kind,)
        if kind == "emptyDir":
            opts = r.mapping(spec, kp, F.MAPPINGS["emptyDir"].names) or {}
            medium = opts.get("medium") or ""
            if medium not in F.MAPPINGS["emptyDir"].enum("medium"):
                r.error(kp + ("medium",), f"{medium!r} is not allowed", '"" or Memory')
                return None
            size = self.quantity(opts["sizeLimit"], kp + ("sizeLimit",), "1Gi") if opts.get("sizeLimit") else None
            return kind, "", medium, size
        text = r.string(spec, kp)
        if text is None:
            return None
        if kind == "hostPath":
            if not text.startswith("/"):
                r.error(kp, f"{text!r} is not an absolute path", "a path starting with /")
                return None
            if backsteps_problem(text):
                r.error(kp, f"{text!r} {backsteps_problem(text)}", "a path without '..' elements",
                        "write the path it leads to")
                return None
        elif not DNS1123_SUBDOMAIN.match(text) or len(text) > 253:
            r.error(kp, f"{text!r} is not a valid {kind} name", "a DNS-1123 subdomain (lower-case, digits, '-', '.')")
            return None
        return kind, text, "", None

    def init_containers(self, value, path: tuple) -> tuple[InitContainer, ...]:
        r = self.r
        if value is None:
            return ()
        if not isinstance(value, list):
            r.error(path, f"is {type_name(value)}", "a list of containers")
            return ()
        out = []
        seen = set()
        for i, item in enumerate(value):
            ip = path + (i,)
            body = r.mapping(item, ip, INIT_FIELDS, required=F.MAPPINGS["initContainer"].required)
            if body is None or body.get("name") is None:
                continue
            name = r.string(body["name"], ip + ("name",))
            if name is None:
                continue
            if len(name) > 63 or not DNS1123_LABEL.match(name):
                r.error(ip + ("name",), f"{name!r} is not a valid container name", "a DNS-1123 label")
                continue
            if name in seen or (name in FRAMEWORKS and name != GENERIC):
                r.error(ip + ("name",), f"container name {name!r} is taken", "a unique name")
                continue
            seen.add(name)
            out.append(InitContainer(
                name=name, image=self.opt_image(body, ip), command=self.opt_list(body, "command", ip),
                args=self.opt_list(body, "args", ip), working_dir=self.opt_path(body, "workingDir", ip),
                env=self.env(body.get("env"), ip + ("env",)),
                resources=self.resources(body.get("resources"), ip + ("resources",)),
                restart_policy=self.opt_choice(body, "restartPolicy", ip, ("Always",))))
        return tuple(out)


def article(word: str) -> str:
    """"an mxnet job", "an mpi job", "a pytorch job": by how the name is spoken."""
    return "an" if word[:1] in "aeio" or word in ("mxnet", "mpi", "xgboost") else "a"


def default_port(framework: str) -> int:
    return DEFAULT_PORT[framework]
