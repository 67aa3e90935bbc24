"""Spec validation of the roles: each role's body, the roles a framework needs, generic success,
task and container names, and the name lengths the pods' names reach."""

from __future__ import annotations

from .. import fields as F
from ..kube import DNS1123_LABEL, GENERATED_SUFFIX, MAX_NAME, generated_name
from ..model import GENERIC, GENERIC_CONTAINER, MAX_REPLICAS, ROLE_LIMITS, ROLE_ORDER, GenericSuccess, RoleSpec
from . import elastic as elastic_rules
from . import pod
from . import probes as parts
from .container import ContainerRules
from .field_names import ALL_ROLE_FIELDS


class RoleRules(ContainerRules):
    """The roles' rules, mixed into the job's validator (job.py), which sets these attributes."""

    source: str
    written_roles: set[str]
    framework: str | None
    generate_name: str | None
    on_runtime: bool

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


def article(word: str) -> str:
    """"an mxnet job", "an mpi job", "a pytorch job": by how the name is spoken."""
    return "an" if word[:1] in "aeio" or word in ("mxnet", "mpi", "xgboost") else "a"
