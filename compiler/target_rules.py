"""What the planner needs to know of a target, handed to it by its caller.

The compiler never imports a target (pyproject.toml's contracts): each target owns its
naming scheme and what it cannot express, in its folder (targets/<name>/), and
`trainspec.targets.load_plans` passes them to `compiler.load_plans` as one `TargetRules`
per target.  The planner runs them on the finished plan, where the spec's positions are
still known: every `Problem` becomes a positioned error of that target
(`JobPlan.target_errors`), or a warning (`JobPlan.target_warnings`).
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from .schemes import NamingScheme, service_scheme

if TYPE_CHECKING:
    from .limits import LimitProblem
    from .plan import JobPlan


class Problem(NamedTuple):
    path: tuple  # where in the spec (the error is put at its position)
    message: str
    expected: str = ""
    hint: str = ""
    unsupported: bool = False  # the target cannot run this job at all: `build` over all targets leaves it out


def no_problems(plan: "JobPlan") -> list:
    return []


class TargetRules(NamedTuple):
    """One target, as the planner sees it (a NamedTuple: no `dataclasses` on the compile path)."""

    name: str
    scheme: Callable[[str], NamingScheme] = service_scheme  # framework -> the host names its pods get
    checks: Callable[["JobPlan"], list[Problem]] = no_problems  # what it cannot express: errors
    warnings: Callable[["JobPlan"], list[Problem]] = no_problems  # valid output the user should know about
    limits: Callable[["JobPlan"], list["LimitProblem"]] = no_problems  # limits its output would break
    # v1.3: the target can name a Trainer runtime the cluster has (spec.trainjob) instead of writing its pods
    cluster_runtime: bool = False
    # v1.3: given the runtime's definition (--runtime), the target writes what the Trainer controller makes of it
    expands_runtime: bool = False
