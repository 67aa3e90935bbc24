"""`{{ ... }}` in command, args and env: rendered per replica in a Jinja sandbox.

Unknown names are errors (StrictUndefined), attribute escapes such as
`''.__class__` are refused by the sandbox, and strings without template syntax
never touch Jinja at all (most specs have none, and jinja2 costs import time).
Limits on time, size and memory (template_limits) make a hostile template a spec
error at its field instead of a hang or an exhausted machine.
"""

from __future__ import annotations

from .template_limits import LimitExceeded

_MARKERS = ("{{", "{%", "{#")


def has_template(text: str) -> bool:
    return any(marker in text for marker in _MARKERS)


class TemplateError(Exception):
    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint


_ENVIRONMENT_CLASS = None


def _environment_class():
    global _ENVIRONMENT_CLASS
    if _ENVIRONMENT_CLASS is None:
        _ENVIRONMENT_CLASS = _make_environment_class()
    return _ENVIRONMENT_CLASS


def _make_environment_class():
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from .template_limits import check_binop as check

    class LimitedEnvironment(ImmutableSandboxedEnvironment):
        """The sandbox, with the operators that can grow a value checked before they run."""

        intercepted_binops = frozenset({"*", "**", "%"})

        def call_binop(self, context, operator, left, right):
            check(operator, left, right)
            return self.binop_table[operator](left, right)

    return LimitedEnvironment


class Templates:
    """Compiles each distinct template string once and renders it against a context.

    One instance per job: the limits on total output and on time (template_limits) are
    budgets for the whole job, since a template renders once per replica.
    """

    def __init__(self) -> None:
        self._env = None
        self._cache: dict[str, tuple[object, bool]] = {}
        self._guard = None

    def _environment(self):
        if self._env is None:
            from jinja2 import StrictUndefined

            from .template_limits import Guard, bounded_join

            self._env = _environment_class()(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
            self._env.concat = bounded_join  # joins every render's and every macro's output
            self._guard = Guard()
        return self._env

    def compile(self, text: str):
        return self._compile(text)[0]

    def _compile(self, text: str) -> tuple[object, bool]:
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

    if isinstance(exc, LimitExceeded):
        return TemplateError(f"template exceeds a limit: {exc}", _LIMIT_HINT)
    if isinstance(exc, RecursionError):
        return TemplateError("template recursion is too deep", "a macro that calls itself must stop")
    if isinstance(exc, MemoryError):
        return TemplateError("template ran out of memory", _LIMIT_HINT)
    if isinstance(exc, UndefinedError):
        names = ", ".join(sorted(context)) + ", hosts.<role>, job.name, job.namespace"
        return TemplateError(f"template error: {exc.message}", f"known names: {names}")
    if isinstance(exc, SecurityError):
        return TemplateError(f"template refused by the sandbox: {exc}", "templates may only read the topology names")
    if isinstance(exc, (JinjaError, TypeError, ValueError, ArithmeticError, LookupError)):
        return TemplateError(f"template error: {exc}")
    return exc


_LIMIT_HINT = ("templates compute names and flags from the topology; build large values outside the spec "
               "(a file in the image, a ConfigMap)")
