"""Chart template text generated from the compiler's rule tables, so the chart has no hand copy.

The chart must decide the success rule itself (a changed replica count can remove
the chief), so `_helpers.tpl` holds Go-template code for it; that code is written
here from `compiler.frameworks.SUCCESS_RULES`, the table the planner reads, and
put in place of the marker line in the template file.
"""

from __future__ import annotations

from trainspec.compiler.frameworks import SUCCESS_RULES
from trainspec.compiler.kube import PERMANENT_EXIT_CODES

EXIT_CODES_MARKER = ("        {{- /* trainspec:permanent-exit-codes (generated from compiler/kube.py "
                     "PERMANENT_EXIT_CODES) */ -}}\n")
SUCCESS_MARKER = "{{- /* trainspec:success-rule (generated from compiler/frameworks.py SUCCESS_RULES) */ -}}\n"


def _condition(framework: str, condition: tuple[str, str]) -> str:
    kind, value = condition
    if kind == "has":
        return f'gt (int (get $counts "{value}" | default 0)) 0'
    return f'eq (($v.{framework} | default dict).successPolicy | default "") "{value}"'


def success_rule_code() -> str:
    """Go-template lines that set `$rule` to the SuccessRule text for `$v.framework` and `$counts`."""
    lines = []
    frameworks = list(SUCCESS_RULES)
    for n, framework in enumerate(frameworks):
        last = n == len(frameworks) - 1
        head = "{{- else -}}" if last else \
            ("{{- if" if n == 0 else "{{- else if") + f' eq $v.framework "{framework}" -}}}}'
        rules = SUCCESS_RULES[framework]
        if len(rules) == 1:
            lines.append(f'{head}{{{{- $rule = "{rules[0][1].text}" -}}}}' + ("{{- end -}}" if last else ""))
            continue
        lines.append(head)
        for k, (condition, rule) in enumerate(rules):
            assign = f'{{{{- $rule = "{rule.text}" -}}}}'
            if condition is None:
                lines.append(f"{{{{- else -}}}}{assign}{{{{- end -}}}}")
            else:
                lines.append(f"{{{{- {'if' if k == 0 else 'else if'} {_condition(framework, condition)} -}}}}{assign}")
        if last:
            lines.append("{{- end -}}")
    return "".join(line + "\n" for line in lines)


def exit_codes_code(codes: range = PERMANENT_EXIT_CODES) -> str:
    """The podFailurePolicy `values:` line listing ExitCode's permanent exit codes."""
    add = "add1 $c" if codes.start == 1 else f"add {codes.start} $c"
    return f"        values: [{{{{ range $c := until {len(codes)} }}}}{{{{ if $c }}}}, {{{{ end }}}}{{{{ {add} }}}}{{{{ end }}}}]\n"


GENERATED = {"_helpers.tpl": ((SUCCESS_MARKER, success_rule_code),),
             "jobs.yaml": ((EXIT_CODES_MARKER, exit_codes_code),)}


def fill(name: str, text: str) -> str:
    """A chart template file's text with the generated parts in place of their markers."""
    for marker, code in GENERATED.get(name, ()):
        if marker not in text:
            raise AssertionError(f"the chart's {name} lost its marker {marker.strip()}")
        text = text.replace(marker, code())
    return text
