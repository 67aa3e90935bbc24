"""`{{ ... }}` in command, args and env: rendered per replica in a Jinja sandbox.

Unknown names are errors (StrictUndefined), attribute escapes such as
`''.__class__` are refused by the sandbox, and strings without template syntax
never touch Jinja at all (most specs have none, and jinja2 costs import time).
Limits on time, size and memory (template_limits) make a hostile template a spec
error at its field instead of a hang or an exhausted machine.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import Error

_MARKERS = ("{{", "{%", "{#")
# One `{{ }}`, `{% %}` or `{# #}` of a template string (a string literal holding `}}` aside).
EXPRESSION = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
# Position key of the i-th EXPRESSION of a templated scalar: positions[path + (EXPRESSION_KEY, i)] (loader).
EXPRESSION_KEY = "\0{{"
# The names a template sees (rendering.render_role's context) and their attributes.
CONTEXT_NAMES = ("hosts", "index", "job", "port", "replicas", "role")
JOB_ATTRIBUTES = ("name", "namespace", "replicas")


def has_template(text: str) -> bool:
    return any(marker in text for marker in _MARKERS)


class TemplateError(Error):
    """A template that cannot be rendered; `needle` finds the failing expression in its text."""

    def __init__(self, message: str, hint: str = "", needle: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.needle = needle

    def expression(self, source: str) -> int | None:
        """Which `{{ }}` of `source` failed (its index among EXPRESSION's matches), when that is clear."""
        spans = [m.group() for m in EXPRESSION.finditer(source)]
        if self.needle:
            pattern = re.compile(self.needle)
            found = [i for i, span in enumerate(spans) if pattern.search(span)]
            if found:
                return found[0]
        return 0 if len(spans) == 1 else None


_ENVIRONMENT_CLASS = None


def _environment_class():
    global _ENVIRONMENT_CLASS
    if _ENVIRONMENT_CLASS is None:
        _ENVIRONMENT_CLASS = _make_environment_class()
    return _ENVIRONMENT_CLASS


def _make_environment_class():
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from .template_limits import check_binop as check
    from .template_limits import check_format

    class LimitedEnvironment(ImmutableSandboxedEnvironment):
        """The sandbox, with the operators and `str.format` calls that can grow a value checked before they run."""

        intercepted_binops = frozenset({"*", "**", "%"})

        def call_binop(self, context, operator, left, right):
            check(operator, left, right)
            return self.binop_table[operator](left, right)

        def wrap_str_format(self, value):
            formatted = super().wrap_str_format(value)
            if formatted is None:
                return None
            text = value.__self__

            def checked(*args, **kwargs):
                check_format(text, args, kwargs)
                return formatted(*args, **kwargs)

            return checked

    return LimitedEnvironment


class Templates:
    """Compiles each distinct template string once and renders it against a context.

    One instance per job: the limits on total output and on time (template_limits) are
    budgets for the whole job, since a template renders once per replica.
    """

    def __init__(self) -> None:
        self._env: Any = None
        self._cache: dict[str, tuple[Any, bool]] = {}
        self._guard: Any = None

    def _environment(self):
        if self._env is None:
            from .template_limits import Guard, bounded_join

            self._env = _environment_class()(undefined=_undefined_class(), autoescape=False,
                                             keep_trailing_newline=True)
            self._env.concat = bounded_join  # joins every render's and every macro's output
            self._guard = Guard()
        return self._env

    def compile(self, text: str):
        return self._compile(text)[0]

    def _compile(self, text: str) -> tuple[Any, bool]:
        """The compiled template and whether it runs under the time and memory limits."""
        entry = self._cache.get(text)
        if entry is None:
            from jinja2 import TemplateSyntaxError

            from .template_limits import is_guarded

            env = self._environment()
            try:
                ast = env.parse(text)
                guarded = is_guarded(ast)
                # Compiling folds constants (`{{ 'x' | center(10**9) }}`), so it is guarded too.
                template = self._limited(lambda: env.from_string(ast), guarded)
            except TemplateSyntaxError as exc:
                raise TemplateError(f"template syntax error: {exc.message}",
                                    "write a literal {{ as {{ '{{' }}") from None
            except (ValueError, OverflowError) as exc:  # constant folding, e.g. a number too long to print
                raise TemplateError(f"template error: {exc}", _LIMIT_HINT) from None
            entry = self._cache[text] = (template, guarded)
        return entry

    def _limited(self, action, guarded: bool):
        from .template_limits import LimitExceeded  # here, not at the top: specs without templates never need it

        try:
            return self._guard.run(action) if guarded else action()
        except LimitExceeded as exc:
            raise TemplateError(f"template exceeds a limit: {exc}", _LIMIT_HINT) from None
        except RecursionError:
            raise TemplateError("template recursion is too deep", "a macro that calls itself must stop") from None
        except MemoryError:
            raise TemplateError("template ran out of memory", _LIMIT_HINT) from None

    def render(self, text: str, context: dict) -> str:
        if not has_template(text):
            return text
        template, guarded = self._compile(text)
        try:
            out = self._guard.run(lambda: template.render(context)) if guarded else template.render(context)
            self._guard.count_output(out)
            return out
        except Exception as exc:  # noqa: BLE001 - sorted out below (jinja2 is imported only when needed)
            raise _render_error(exc, context) from None


def _render_error(exc: Exception, context: dict) -> Exception:
    """The TemplateError for an exception raised while rendering (or `exc` itself when it is a bug)."""
    from jinja2 import TemplateError as JinjaError
    from jinja2 import UndefinedError
    from jinja2.exceptions import SecurityError

    from .template_limits import LimitExceeded

    if isinstance(exc, LimitExceeded):
        return TemplateError(f"template exceeds a limit: {exc}", _LIMIT_HINT)
    if isinstance(exc, RecursionError):
        return TemplateError("template recursion is too deep", "a macro that calls itself must stop")
    if isinstance(exc, MemoryError):
        return TemplateError("template ran out of memory", _LIMIT_HINT)
    if isinstance(exc, UndefinedError):
        return _undefined_error(exc, context)
    if isinstance(exc, SecurityError):
        return TemplateError(f"template refused by the sandbox: {exc}", "templates may only read the topology names")
    if isinstance(exc, (JinjaError, TypeError, ValueError, ArithmeticError, LookupError)):
        return TemplateError(f"template error: {exc}")
    return exc


_LIMIT_HINT = ("templates compute names and flags from the topology; build large values outside the spec "
               "(a file in the image, a ConfigMap)")


_UNDEFINED_CLASS = None


def _undefined_class():
    """StrictUndefined whose error says which name (and of what) was missing: `_undefined_error` words it."""
    global _UNDEFINED_CLASS
    if _UNDEFINED_CLASS is None:
        from jinja2 import StrictUndefined, UndefinedError
        from jinja2.utils import missing

        class UnknownName(UndefinedError):
            def __init__(self, message: str, name: Any = None, owner: Any = None):
                super().__init__(message)
                self.name = name
                self.owner = owner

        class Undefined(StrictUndefined):
            __slots__ = ()

            def __init__(self, hint=None, obj=missing, name=None, exc=UndefinedError):
                if exc is UndefinedError:  # not the sandbox's SecurityError
                    def exc(message: str) -> UnknownName:
                        return UnknownName(message, name, obj)

                super().__init__(hint, obj, name, exc)

        _UNDEFINED_CLASS = Undefined
    return _UNDEFINED_CLASS


def _undefined_error(exc, context: dict) -> TemplateError:
    """A missing name, role or attribute in the words of the spec: what is there, and the likely fix."""
    import difflib

    from jinja2.utils import missing

    name, owner = getattr(exc, "name", None), getattr(exc, "owner", None)
    known = ", ".join(CONTEXT_NAMES) + ", hosts.<role>, " + ", ".join(f"job.{a}" for a in JOB_ATTRIBUTES)
    if not isinstance(name, str):
        return TemplateError(f"template error: {exc.message}", f"known names: {known}")
    hosts = context.get("hosts")
    if owner is not None and owner is hosts:
        roles = list(hosts)
        close = difflib.get_close_matches(name, roles, n=1, cutoff=0.6)
        from .model import ROLE_ORDER

        framework_role = any(name in roles for roles in ROLE_ORDER.values())
        hint = f"did you mean {close[0]!r}?" if close else (f"this job has no {name} role" if framework_role else "")
        dashed = next((r for r in roles if r.startswith(f"{name}-")), None)
        if dashed is not None:  # `hosts.client-a` is `hosts.client - a` to Jinja
            hint = f"a role name with '-' is written hosts[{dashed!r}]"
        return TemplateError(f"template error: unknown role {name!r}; roles: {', '.join(roles)}", hint,
                             rf"\bhosts\s*(\.\s*{re.escape(name)}\b|\[\s*['\"]{re.escape(name)}['\"])")
    if owner is not None and owner is context.get("job"):
        close = difflib.get_close_matches(name, JOB_ATTRIBUTES, n=1, cutoff=0.6)
        hint = f"did you mean 'job.{close[0]}'?" if close else f"job has {', '.join(JOB_ATTRIBUTES)}"
        return TemplateError(f"template error: job has no attribute {name!r}", hint,
                             rf"\bjob\s*\.\s*{re.escape(name)}\b")
    if owner is missing:
        close = difflib.get_close_matches(name, CONTEXT_NAMES, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? known names: {known}" if close else f"known names: {known}"
        return TemplateError(f"template error: {name!r} is undefined", hint, rf"(?<![\w.]){re.escape(name)}\b")
    return TemplateError(f"template error: {exc.message}", f"known names: {known}")
