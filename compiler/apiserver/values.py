"""Helpers the pod checks share: integers as JSON has them, quantities (ValidateResourceQuantityValue's
parse), local paths (validateLocalDescendingPath), and the name rules of compiler/kube_rules.py remembered
per value (the same label keys, values and env names recur on every object of a job)."""

from __future__ import annotations

from typing import TypeGuard

from ..kube import parse_quantity, quantity_size_problem
from ..kube_rules import dns_label_problem, env_name_problem, label_value_problem, qualified_name_problem
from .findings import Sink
from .meta import cached

# the same label keys, values and env names recur on every object of a job: each checked once
qualified_name_problem = cached(qualified_name_problem)


label_value_problem = cached(label_value_problem)


env_name_problem = cached(env_name_problem)


dns_label_problem = cached(dns_label_problem)


def is_int(value) -> TypeGuard[int]:
    """An integer as JSON has it (a bool is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def local_path(s: Sink, value, path: tuple, required: bool = False) -> None:
    """core validateLocalNonReservedPath / validateLocalDescendingPath: relative, no '..' element."""
    if not value:
        if required:
            s.required(path)
        return
    if value.startswith("/"):
        s.invalid(path, value, "must be a relative path")
    parts = value.replace("\\", "/").split("/")
    if ".." in parts:
        s.invalid(path, value, "must not contain '..'")
    if required and value.startswith(".."):  # validateLocalNonReservedPath
        s.invalid(path, value, "must not start with '..'")


def quantity(s: Sink, path: tuple, value, name: str):
    """apimachinery resource.ParseQuantity; core ValidateNonnegativeQuantity."""
    text = str(value)
    problem = quantity_size_problem(text)
    if problem:
        s.invalid(path, value, "quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        return None
    whole = _whole_quantity(text)
    if whole is not None:
        return whole
    try:
        return parse_quantity(text)
    except ValueError:
        s.invalid(path, value, "quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        return None


_WHOLE_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
                 "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def _whole_quantity(text: str) -> int | None:
    """`2`, `8Gi`: a whole number times a whole suffix is an exact int, compared with the Decimals of
    other quantities as equal values; `decimal` is then left unimported on the compile path of the usual
    specs (tests/project/test_startup_imports.py).  None for anything else (fractions, exponents, m/u/n, signs)."""
    digits = text.rstrip("kMGTPEi")
    suffix = text[len(digits):]
    if digits.isascii() and digits.isdigit() and suffix in _WHOLE_SUFFIX:
        return int(digits) * _WHOLE_SUFFIX[suffix]
    return None
