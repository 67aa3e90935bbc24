"""Chart template text generated from the compiler's rule tables, so the chart has no hand copy.

The chart recomputes the topology from values (a changed replica count can remove
the chief), so its templates hold Go-template code for rules the compiler also
applies: the success rule, ExitCode's permanent exit codes, the role order and the
name and replica limits.  That code is written here from the compiler's tables
(the ones the planner and validator read) and put in place of marker lines
(`{{- /* trainspec:... */ -}}`) in the template files.

A chart serves one framework (values.schema.json fixes `framework`).  The code of
the first four frameworks is written in the template files; a later framework's
(`frameworks/<name>.tpl`: its environment; its names, role order and success
rule from the tables) is generated into the charts of that framework's jobs only,
so the charts of the other frameworks stay as they were.
"""

from __future__ import annotations

import json
import os

from trainspec.compiler.frameworks import CONTAINER_NAME, START_AFTER, SUCCESS_RULES
from trainspec.compiler.kube import MAX_NAME, PERMANENT_EXIT_CODES, escape_references
from trainspec.compiler.model import GENERIC, MAX_REPLICAS, ROLE_ORDER
from trainspec.compiler.runpolicy import VERSION

from ..common import PORT_NAMES
from ..jobset.checks import JOBSET_FRAMEWORKS, MAX_DNS_LABEL, POD_SUFFIX
from ..jobset.render import START_ORDER
from ..jobset.scheme import JOBSET_ONE_POD_JOBS
from ..k8s.scheme import RANK_SCRIPT, RANK_VALUE, RANK_VARIABLES, RANKED_ROLES, SHELL

# Frameworks whose code is in the template files themselves.
BUILTIN = ("tensorflow", "pytorch", "mxnet", "mpi")
FRAMEWORKS_DIR = os.path.join(os.path.dirname(__file__), "chart", "frameworks")


def chart_frameworks(framework: str | None) -> list[str]:
    """The frameworks a chart for `framework` carries code for."""
    return list(BUILTIN) + ([framework] if framework and framework not in BUILTIN else [])

SUCCESS_MARKER = "{{- /* trainspec:success-rule (generated from compiler/frameworks.py SUCCESS_RULES) */ -}}\n"


def _condition(framework: str, condition: tuple[str, str]) -> str:
    kind, value = condition
    if kind == "has":
        return f'gt (int (get $counts "{value}" | default 0)) 0'
    return f'eq (($v.{framework} | default dict).successPolicy | default "") "{value}"'


def _assign(rule) -> str:
    return (f'{{{{- $rule = "{rule.text}" -}}}}{{{{- $successRole = "{rule.role}" -}}}}'
            f'{{{{- $successScope = "{rule.scope}" -}}}}{{{{- $successIndex = {int(rule.index)} -}}}}')


# framework: generic: values.success ({role, policy}) as compiler/frameworks.py generic_success and
# SuccessRule.text; unsaid, every replica of every role (role ""). Its replicatedJobs start in the
# roles' order (no startupPolicy), so $startOrders gets the roles here, once they are known.
GENERIC_SUCCESS = ('{{- $rule = "all replicas succeed" -}}{{- $successRole = "" -}}{{- $successScope = "all" -}}'
                   '{{- $successIndex = 0 -}}{{- with $v.success -}}{{- $successRole = .role -}}'
                   '{{- if eq (.policy | default "AllReplicas") "AnyReplica" -}}{{- $successScope = "any" -}}'
                   '{{- $rule = printf "any %s succeeds" .role -}}'
                   '{{- else -}}{{- $rule = printf "all %ss succeed" .role -}}'
                   '{{- end -}}{{- end -}}{{- $_ := set $startOrders "generic" $roles -}}')


def success_rule_code(framework: str | None = None) -> str:
    """Go-template lines that set `$rule` (the SuccessRule text), `$successRole`, `$successScope` and
    `$successIndex` (its fields) for `$v.framework` and `$counts`."""
    lines = []
    frameworks = [fw for fw in SUCCESS_RULES if fw in chart_frameworks(framework)]
    for n, framework in enumerate(frameworks):
        last = n == len(frameworks) - 1
        head = "{{- else -}}" if last else \
            ("{{- if" if n == 0 else "{{- else if") + f' eq $v.framework "{framework}" -}}}}'
        rules = SUCCESS_RULES[framework]
        if framework == GENERIC:
            lines.append(f"{head}{GENERIC_SUCCESS}" + ("{{- end -}}" if last else ""))
            continue
        if len(rules) == 1:
            lines.append(f'{head}{_assign(rules[0][1])}' + ("{{- end -}}" if last else ""))
            continue
        lines.append(head)
        for k, (condition, rule) in enumerate(rules):
            assign = _assign(rule)
            if condition is None:
                lines.append(f"{{{{- else -}}}}{assign}{{{{- end -}}}}")
            else:
                lines.append(f"{{{{- {'if' if k == 0 else 'else if'} {_condition(framework, condition)} -}}}}{assign}")
        if last:
            lines.append("{{- end -}}")
    return "".join(line + "\n" for line in lines)


ROLE_ORDER_MARKER = "{{- /* trainspec:role-order (generated from compiler/model.py ROLE_ORDER) */ -}}\n"
NAME_LIMIT_MARKER = "{{- /* trainspec:name-limit (generated from compiler/kube.py MAX_NAME) */ -}}\n"
REPLICA_LIMIT_MARKER = "{{- /* trainspec:replica-limit (generated from compiler/model.py MAX_REPLICAS) */ -}}\n"


def role_order_code(framework: str | None = None) -> str:
    """`$orders`: framework -> its roles in the order every target lists them (generic: values.roleOrder,
    the spec's order)."""
    pairs = " ".join(f'"{fw}" (list {" ".join(f"{chr(34)}{r}{chr(34)}" for r in roles)})'
                     for fw, roles in ROLE_ORDER.items() if fw in chart_frameworks(framework) and fw != GENERIC)
    code = f"{{{{- $orders := dict {pairs} -}}}}\n"
    if framework == GENERIC:
        code += '{{- $_ := set $orders "generic" ($v.roleOrder | default list) -}}\n'
    return code


FRAMEWORK_NAMES_MARKER = ("{{- /* trainspec:framework-names (generated from compiler/frameworks.py CONTAINER_NAME, "
                          "targets/common.py PORT_NAMES) */ -}}\n")
FRAMEWORK_ENV_MARKER = ("{{- /* trainspec:framework-env (generated from targets/helm/chart/frameworks/<framework>.tpl) "
                        "*/ -}}\n")


def framework_names_code(framework: str | None = None) -> str:
    """A later framework's container and port name (the first four are in jobs.yaml's dicts)."""
    if framework is None or framework in BUILTIN:
        return ""
    return (f'{{{{- $container = "{CONTAINER_NAME[framework]}" -}}}}\n'
            f'{{{{- $_ := set $portNames "{framework}" "{PORT_NAMES[framework]}" -}}}}\n')


def framework_env_code(framework: str | None = None) -> str:
    """A later framework's `else if` branch of jobs.yaml's framework environment."""
    if framework is None or framework in BUILTIN:
        return ""
    with open(os.path.join(FRAMEWORKS_DIR, f"{framework}.tpl"), encoding="utf-8") as handle:
        return handle.read()


def name_limit_code(framework: str | None = None) -> str:
    """Fail when the longest generated name `<job>-<role>-<i>` is not a DNS label."""
    return (f"{{{{- if gt (len $longest) {MAX_NAME} -}}}}\n"
            f'{{{{- fail (printf "generated name %q is %d characters; Kubernetes allows {MAX_NAME}: lower '
            'roles.%s.replicas or shorten name" $longest (len $longest) $name) -}}\n')


def replica_limit_code(framework: str | None = None) -> str:
    return (f"{{{{- if gt $total {MAX_REPLICAS} -}}}}\n"
            f'{{{{- fail (printf "%d replicas in all; trainspec allows at most {MAX_REPLICAS}" $total) -}}}}\n')


JOBSET_MARKER = ("{{- /* trainspec:jobset (generated from targets/jobset/render.py START_ORDER, scheme.py "
                 "JOBSET_ONE_POD_JOBS, checks.py JOBSET_FRAMEWORKS) */ -}}\n")
JOBSET_NAME_MARKER = "{{- /* trainspec:jobset-name-limit (generated from targets/jobset/checks.py) */ -}}\n"
EXIT_CODE_LIST_MARKER = ("{{- /* trainspec:permanent-exit-code-list (generated from compiler/kube.py "
                         "PERMANENT_EXIT_CODES) */ -}}\n")


def _string_lists(table: dict[str, tuple[str, ...]]) -> str:
    return " ".join(f'"{key}" (list {" ".join(chr(34) + r + chr(34) for r in roles)})' for key, roles in table.items())


def jobset_code(framework: str | None = None) -> str:
    """`$startOrders` (framework -> replicatedJobs in start order) and `$onePodJobs` (framework -> roles
    written as N one-pod Jobs), the jobset target's tables; with workload jobset, `fail` for a framework
    the jobset target refuses (not in JOBSET_FRAMEWORKS)."""
    # generic (spec v1.2) is named only in a generic job's chart: the others' charts stay as they were
    known = [fw for fw in JOBSET_FRAMEWORKS if fw != GENERIC or framework == GENERIC]
    frameworks = " ".join(f'"{fw}"' for fw in known)
    return (f"{{{{- $startOrders := dict {_string_lists(START_ORDER)} -}}}}\n"
            f"{{{{- $onePodJobs := dict {_string_lists(JOBSET_ONE_POD_JOBS)} -}}}}\n"
            f"{{{{- if and $jobset (not (has $v.framework (list {frameworks}))) -}}}}\n"
            '{{- fail (printf "workload jobset: trainspec does not yet write the %s controller\'s variables for '
            'JobSet host names (the jobset target refuses it too); expected framework one of '
            f'{", ".join(known)}; use workload jobs" $v.framework) -}}}}\n'
            "{{- end -}}\n")


def jobset_name_limit_code(framework: str | None = None) -> str:
    """Fail as the jobset target does when the JobSet webhook would refuse `<job>-<role>-<j>-<i>-abcde`."""
    limit = MAX_DNS_LABEL - POD_SUFFIX
    return (f"{{{{- if gt (len $jsLongest) {limit} -}}}}\n"
            f'{{{{- fail (printf "workload jobset: pod names such as %s-abcde are longer than {MAX_DNS_LABEL} '
            'characters (the JobSet webhook refuses them): shorten name, or use workload jobs" $jsLongest) -}}\n'
            "{{- end -}}\n")


def exit_code_list_code(framework: str | None = None, codes: range = PERMANENT_EXIT_CODES) -> str:
    """`$exitCodes`: ExitCode's permanent exit codes as a list of ints."""
    add = "add1 $c" if codes.start == 1 else f"add {codes.start} $c"
    return (f"{{{{- $exitCodes := list -}}}}{{{{- range $c := until {len(codes)} -}}}}"
            f"{{{{- $exitCodes = append $exitCodes ({add}) -}}}}{{{{- end -}}}}\n")


RANKED_ROLES_MARKER = ("{{- /* trainspec:ranked-roles (generated from targets/k8s/scheme.py RANKED_ROLES, "
                       "RANK_VARIABLES, RANK_SCRIPT) */ -}}\n")
JOB_SUCCESS_POLICY_MARKER = ("{{- /* trainspec:job-success-policy (generated from compiler/kube_rules.py "
                             "job-success-policy and --kube-version) */ -}}\n")


def ranked_roles_code(framework: str | None = None) -> str:
    """`$rankedRoles`: framework -> roles whose RANK is index + 1; `$rankVars`: the variables set to it; the rank
    prelude's pieces (`$rankShell`, the `$rankScript` format, `$rankValue`), in kubelet text as the k8s target
    writes them (scheme.rank_script: escaped once, whole)."""
    known = chart_frameworks(framework)
    table: dict[str, tuple[str, ...]] = {fw: roles for fw, roles in RANKED_ROLES.items() if fw in known}
    names: dict[str, tuple[str, ...]] = {fw: names for fw, names in RANK_VARIABLES.items() if fw in known}
    script = escape_references(RANK_SCRIPT.replace("%", "%%").format(exports="%s"))
    shell = " ".join(json.dumps(word) for word in SHELL)
    return (f"{{{{- $rankedRoles := dict {_string_lists(table)} -}}}}\n"
            f"{{{{- $rankVars := dict {_string_lists(names)} -}}}}\n"
            f"{{{{- $rankShell := list {shell} -}}}}\n"
            f"{{{{- $rankScript := {json.dumps(script)} -}}}}\n"
            f"{{{{- $rankValue := {json.dumps(escape_references(RANK_VALUE))} -}}}}\n")


def job_success_policy_code(applies: bool) -> str:
    """`$jobSuccessPolicy`: whether the Kubernetes version compiled for has the Job successPolicy (1.31+)."""
    return f"{{{{- $jobSuccessPolicy := {'true' if applies else 'false'} -}}}}\n"


RUN_POLICY_MARKER = ("{{- /* trainspec:run-policy (generated from compiler/runpolicy.py VERSION, "
                     "compiler/frameworks.py START_AFTER) */ -}}\n")


def run_policy_code(framework: str | None = None) -> str:
    """`$runPolicy` started: its version, and `startOrder` when a START_AFTER rule of `$v.framework`
    waits for roles with replicas (as compiler/frameworks.py start_order)."""
    lines = [f'{{{{- $runPolicy := dict "version" {VERSION} -}}}}', "{{- $startOrder := list -}}"]
    for fw, rules in START_AFTER.items():
        if fw not in chart_frameworks(framework):
            continue
        lines.append(f'{{{{- if eq $v.framework "{fw}" -}}}}')
        for rule in rules:
            after = " ".join(f'"{r}"' for r in rule.after)
            lines.append(f"{{{{- $after := list -}}}}{{{{- range $r := list {after} -}}}}"
                         "{{- if gt (int (get $t.counts $r | default 0)) 0 -}}{{- $after = append $after $r -}}"
                         "{{- end -}}{{- end -}}")
            lines.append(f'{{{{- if $after -}}}}{{{{- $startOrder = append $startOrder '
                         f'(dict "role" "{rule.role}" "after" $after) -}}}}{{{{- end -}}}}')
        lines.append("{{- end -}}")
    lines.append('{{- if $startOrder -}}{{- $_ := set $runPolicy "startOrder" $startOrder -}}{{- end -}}')
    return "".join(line + "\n" for line in lines)


GENERATED = {"_helpers.tpl": ((ROLE_ORDER_MARKER, role_order_code), (NAME_LIMIT_MARKER, name_limit_code),
                              (REPLICA_LIMIT_MARKER, replica_limit_code), (SUCCESS_MARKER, success_rule_code),
                              (JOBSET_MARKER, jobset_code), (JOBSET_NAME_MARKER, jobset_name_limit_code)),
             "jobs.yaml": ((EXIT_CODE_LIST_MARKER, exit_code_list_code), (RANKED_ROLES_MARKER, ranked_roles_code),
                           (FRAMEWORK_NAMES_MARKER, framework_names_code), (FRAMEWORK_ENV_MARKER, framework_env_code)),
             "topology.yaml": ((RUN_POLICY_MARKER, run_policy_code),)}


# Spec v1.2's names (taskName, containerName) and generic's success: code only in the charts of jobs that
# use them (`names`), so every other chart stays as it was.
TASK_HOST = ('{{- if and $jobset $r.taskName -}}{{- $task := $r.taskName -}}'
             '{{- $host = printf "%s-%s-0-%d.%s" $v.name $task $i $v.name -}}'
             '{{- if has $name $perJob -}}{{- $host = printf "%s-%s-%d-0.%s" $v.name $task $i $v.name -}}{{- end -}}'
             '{{- end -}}\n')
TASK_LONGEST = ('{{- with $r.taskName -}}{{- $jsLongest = printf "%s-%s-0-%d" $v.name . (sub $n 1) -}}'
                '{{- if has $name $perJob -}}{{- $jsLongest = printf "%s-%s-%d-0" $v.name . (sub $n 1) -}}{{- end -}}'
                '{{- end -}}\n')
CONTAINER_NAME_CODE = "{{- $container := $r.containerName | default ($v.containerName | default $container) }}\n"
ANY_REPLICA = ('{{- if and (eq $t.successScope "any") (eq $role $t.successRole) (gt (int $pods) 1) }}'
               '{{- $_ := set $spec "successPolicy" (dict "rules" (list (dict "succeededCount" 1))) }}{{- end }}\n')
TASK_NAME = ('{{- with $r.taskName }}{{- $_ := set (get $rjobs $role) "name" . }}{{- end }}\n')
TASK_SUCCESS = ('{{- if not $t.successRole }}{{- $_ := set $spec "successPolicy" (dict "operator" "All") }}'
                '{{- else }}{{- with (get $v.roles $t.successRole).taskName }}'
                '{{- $_ := set $spec "successPolicy" (dict "operator" "All" "targetReplicatedJobs" (list .)) }}'
                '{{- end }}{{- end }}'
                '{{- $tasks := list }}{{- range $role := $exitCode }}'
                '{{- $tasks = append $tasks ((get $v.roles $role).taskName | default $role) }}{{- end }}'
                '{{- $exitCode = $tasks }}\n')
NAMES_GENERATED = {
    "_helpers.tpl": (("{{- /* trainspec:task-host (generated for spec v1.2 taskName) */ -}}\n", TASK_HOST),
                     ("{{- /* trainspec:task-longest (generated for spec v1.2 taskName) */ -}}\n", TASK_LONGEST)),
    "jobs.yaml": (("{{- /* trainspec:container-name (generated for spec v1.2 containerName) */ -}}\n",
                   CONTAINER_NAME_CODE),
                  ("{{- /* trainspec:any-replica (generated for spec v1.2 success.policy AnyReplica) */ -}}\n",
                   ANY_REPLICA),
                  ("{{- /* trainspec:task-name (generated for spec v1.2 taskName) */ -}}\n", TASK_NAME),
                  ("{{- /* trainspec:task-success (generated for spec v1.2 taskName and framework generic) */ -}}\n",
                   TASK_SUCCESS)),
}


def fill(name: str, text: str, framework: str | None = None, names: bool = False,
         job_success_policy: bool = True) -> str:
    """A chart template file's text, for a job of `framework`, with the generated parts in place of their markers;
    `names`: the job uses spec v1.2's taskName / containerName or is generic (NAMES_GENERATED's code);
    `job_success_policy`: the Kubernetes version compiled for has the Job successPolicy (kube_rules)."""
    if name == "jobs.yaml":
        if JOB_SUCCESS_POLICY_MARKER not in text:
            raise AssertionError(f"the chart's {name} lost its marker {JOB_SUCCESS_POLICY_MARKER.strip()}")
        text = text.replace(JOB_SUCCESS_POLICY_MARKER, job_success_policy_code(job_success_policy))
    for marker, code in GENERATED.get(name, ()):
        if marker not in text:
            raise AssertionError(f"the chart's {name} lost its marker {marker.strip()}")
        text = text.replace(marker, code(framework))
    for marker, names_code in NAMES_GENERATED.get(name, ()):
        if marker not in text:
            raise AssertionError(f"the chart's {name} lost its marker {marker.strip()}")
        text = text.replace(marker, names_code if names else "")
    return text
