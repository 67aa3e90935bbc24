"""A refusal about one field of an object the model was handed (a pod, a container, a port entry, a
compose service), in the compiler's error shape.

The model's checks see plain mappings, not the file they came from: `FieldError` names the mapping
(`node`) and the field's path under it, and the reader that is reading the file turns that into the
field's line and column (readers/positions.py). Where no reader does, it reads as any UsageError:
`where: path: message; expected ...; hint: ...`.
"""

from __future__ import annotations

from typing import Any

from ...compiler.errors import UsageError, dotted


class FieldError(UsageError):
    def __init__(self, message: str, *, where: str, node: Any, field: tuple, expected: str = "", hint: str = ""):
        super().__init__(message, where=where, path=dotted(field), expected=expected, hint=hint)
        self.node = node
        self.field = field
