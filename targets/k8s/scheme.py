"""The k8s target's host names: pod hostname `<job>-<role>-<i>` + subdomain `<job>` (spec v1.3).

One Indexed Job per role named `<job>-<role>` (the role's taskName when set): the Job controller names
pod i's host `<job>-<role>-<i>`; the pods' `subdomain` is the job's one headless Service, `<job>`, so
replica i is `<job>-<role>-<i>.<job>` (a StatefulSet per role, for restartPolicy Always, names its pods
the same).  The same names as the volcano target's svc plugin: the planner renders them once.
"""

from trainspec.compiler.schemes import NamingScheme

from ..volcano.scheme import SUBDOMAIN

INDEXED = SUBDOMAIN


def scheme_for(framework: str) -> NamingScheme:
    return INDEXED
