"""`{{ ... }}` in command, args and env: rendered per replica in a Jinja sandbox.

Unknown names are errors (StrictUndefined), attribute escapes such as
`''.__class__` are refused by the sandbox, and strings without template syntax
never touch Jinja at all (most specs have none, and jinja2 costs import time).
"""

from __future__ import annotations

_MARKERS = ("{{", "{%", "{#")


def has_template(text: str) -> bool:
    return any(marker in text for marker in _MARKERS)


class TemplateError(Exception):
    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint


class Templates:
    """Compiles each distinct template string once and renders it against a context."""

    def __init__(self) -> None:
        self._env = None
        self._cache: dict[str, object] = {}

    def _environment(self):
        if self._env is None:
            from jinja2 import StrictUndefined
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            self._env = ImmutableSandboxedEnvironment(
                undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
        return self._env

    def compile(self, text: str):
        template = self._cache.get(text)
        if template is None:
            from jinja2 import TemplateSyntaxError

            try:
                template = self._environment().from_string(text)
            except TemplateSyntaxError as exc:
                raise TemplateError(f"template syntax error: {exc.message}",
                                    "write a literal {{ as {{ '{{' }}") from None
            self._cache[text] = template
        return template

    def render(self, text: str, context: dict) -> str:
        if not has_template(text):
            return text
        template = self.compile(text)
        from jinja2 import TemplateError as JinjaError, UndefinedError
        from jinja2.exceptions import SecurityError

        try:
            return template.render(context)
        except UndefinedError as exc:
            names = ", ".join(sorted(context)) + ", hosts.<role>, job.name, job.namespace"
            raise TemplateError(f"template error: {exc.message}", f"known names: {names}") from None
        except SecurityError as exc:
            raise TemplateError(f"template refused by the sandbox: {exc}",
                                "templates may only read the topology names") from None
        except JinjaError as exc:
            raise TemplateError(f"template error: {exc}") from None
        except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
            raise TemplateError(f"template error: {exc}") from None
