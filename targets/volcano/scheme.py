"""The volcano target's host names: pod hostname `<job>-<task>-<i>` + subdomain `<job>` (the svc plugin)."""

from trainspec.compiler.schemes import NamingScheme

SUBDOMAIN = NamingScheme("subdomain", "<job>-<task>-<i>.<job>", lambda job, role, i: f"{job}-{role}-{i}.{job}",
                         named=lambda job, role, task, i: f"{job}-{task}-{i}.{job}")


def scheme_for(framework: str) -> NamingScheme:
    return SUBDOMAIN
