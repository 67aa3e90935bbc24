"""The job's run policy as machine-readable metadata in compiled files, written and read in one place.

A compiled `k8s.yaml` carries it as the topology ConfigMap's annotation
`trainspec.dev/run-policy` (compact JSON), a `compose.yaml` as
`x-trainspec.runPolicy` (the same mapping, as YAML).  Targets write it from the
plan (`encode`); the emulator reads it back (`decode`) instead of guessing the
user's intent from pod restart policies, workload kinds or role names:

    {"version": 1,
     "success": {"role": "worker", "scope": "all", "index": 0},
     "restart": {"<role>": {"policy": "ExitCode", "backoffLimit": 3}, ...},   # backoffLimit only when written
     "startOrder": [{"role": "launcher", "after": ["worker"]}],
     "cleanup": {"pods": "Running", "ttlSecondsAfterFinished": 60},          # keys only when written
     "backoffLimit": 4, "deadline": 600}                                      # only when written

Plain data, no I/O: targets may import it (it reads only the plan's types).
"""

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from .errors import Error
from .model import RESTART_POLICIES, by_type
from .plan import Cleanup, JobPlan, Restart, StartAfter, SuccessRule

ANNOTATION = "trainspec.dev/run-policy"
COMPOSE_KEY = "runPolicy"  # under x-trainspec
VERSION = 1
CLEAN_POD_POLICIES = ("Running", "All", "None")


class RunPolicy(NamedTuple):
    """What a compiled file says about running the job: the plan's typed fields, read back.
    (A NamedTuple, not a dataclass: targets import this module, and `dataclasses` costs start-up.)"""

    success: SuccessRule
    restart: dict[str, Restart] = {}  # never mutated
    start_order: tuple[StartAfter, ...] = ()
    cleanup: Cleanup = Cleanup()
    backoff_limit: int | None = None
    deadline: int | None = None


by_type(RunPolicy)


def encode(plan: JobPlan) -> dict[str, Any]:
    """The run policy of `plan` as a JSON-compatible mapping (deterministic key order)."""
    out: dict[str, Any] = {
        "version": VERSION,
        "success": {"role": plan.success.role, "scope": plan.success.scope, "index": plan.success.index},
        "restart": {role.name: _restart(role.restart) for role in plan.roles},
    }
    if plan.start_order:
        out["startOrder"] = [{"role": s.role, "after": list(s.after)} for s in plan.start_order]
    cleanup: dict[str, Any] = {}
    if plan.cleanup.pods is not None:
        cleanup["pods"] = plan.cleanup.pods
    if plan.cleanup.ttl_seconds_after_finished is not None:
        cleanup["ttlSecondsAfterFinished"] = plan.cleanup.ttl_seconds_after_finished
    if cleanup:
        out["cleanup"] = cleanup
    if plan.backoff_limit is not None:
        out["backoffLimit"] = plan.backoff_limit
    if plan.active_deadline_seconds is not None:
        out["deadline"] = plan.active_deadline_seconds
    return out


def _restart(restart: Restart) -> dict[str, Any]:
    out: dict[str, Any] = {"policy": restart.policy}
    if restart.backoff_limit is not None:
        out["backoffLimit"] = restart.backoff_limit
    return out


def annotation(plan: JobPlan) -> str:
    """`encode(plan)` as the compact JSON an annotation value holds.  Keys sorted, as Go's
    json.Marshal (Helm's toJson) writes them, so the chart renders the same bytes."""
    return json.dumps(encode(plan), sort_keys=True, separators=(",", ":"))


class RunPolicyError(Error, ValueError):
    """The metadata is malformed; the message names the field."""


def parse_annotation(text: object) -> RunPolicy:
    if not isinstance(text, str):
        raise RunPolicyError(f"{ANNOTATION}: expected a JSON string, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RunPolicyError(f"{ANNOTATION}: not JSON ({exc})") from None
    return decode(data)


def decode(data: object) -> RunPolicy:
    """The run policy from `encode`'s mapping; RunPolicyError names what is wrong."""
    d = _mapping(data, "run policy")
    version = d.get("version", VERSION)
    if version != VERSION:
        raise RunPolicyError(f"version {version!r} is not supported (expected {VERSION}); rebuild with this trainspec")
    s = _mapping(d.get("success"), "success")
    scope = s.get("scope", "one")
    if scope not in ("one", "all", "any"):
        raise RunPolicyError(f"success.scope {scope!r}: expected one, all or any")
    role = s.get("role")
    # role "" with scope all: every replica of every role (framework: generic's default rule)
    success = SuccessRule(role if role == "" and scope == "all" else _str(role, "success.role"), scope,
                          _int(s.get("index", 0), "success.index"))
    restart: dict[str, Restart] = {}
    for role, r in _mapping(d.get("restart", {}), "restart").items():
        r = _mapping(r, f"restart.{role}")
        policy = _str(r.get("policy"), f"restart.{role}.policy")
        if policy not in RESTART_POLICIES:
            raise RunPolicyError(f"restart.{role}.policy {policy!r}: expected one of {', '.join(RESTART_POLICIES)}")
        restart[str(role)] = Restart(policy, _opt_int(r.get("backoffLimit"), f"restart.{role}.backoffLimit"))
    order = []
    for i, s in enumerate(_list(d.get("startOrder", []), "startOrder")):
        s = _mapping(s, f"startOrder[{i}]")
        after = tuple(_str(a, f"startOrder[{i}].after") for a in _list(s.get("after"), f"startOrder[{i}].after"))
        order.append(StartAfter(_str(s.get("role"), f"startOrder[{i}].role"), after))
    c = _mapping(d.get("cleanup", {}), "cleanup")
    pods = c.get("pods")
    if pods is not None and pods not in CLEAN_POD_POLICIES:
        raise RunPolicyError(f"cleanup.pods {pods!r}: expected one of {', '.join(CLEAN_POD_POLICIES)}")
    cleanup = Cleanup(pods, _opt_int(c.get("ttlSecondsAfterFinished"), "cleanup.ttlSecondsAfterFinished"))
    return RunPolicy(success, restart, tuple(order), cleanup, _opt_int(d.get("backoffLimit"), "backoffLimit"),
                     _opt_int(d.get("deadline"), "deadline"))


def _mapping(v: object, where: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise RunPolicyError(f"{where}: expected a mapping")
    return v


def _list(v: object, where: str) -> list:
    if not isinstance(v, list):
        raise RunPolicyError(f"{where}: expected a list")
    return v


def _str(v: object, where: str) -> str:
    if not isinstance(v, str) or not v:
        raise RunPolicyError(f"{where}: expected a name")
    return v


def _int(v: object, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise RunPolicyError(f"{where}: expected a non-negative integer")
    return v


def _opt_int(v: object, where: str) -> int | None:
    return None if v is None else _int(v, where)
