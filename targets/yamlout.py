"""One YAML writer for every target: block style, stable order, no anchors, no tags."""

from __future__ import annotations

import yaml

_BASE = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class FlowList(list):
    """A short list of scalars written on one line (e.g. exit-code sets)."""


class _Dumper(_BASE):  # type: ignore[misc, valid-type]
    def ignore_aliases(self, data):  # shared dicts must be written out, never as &anchors
        return True


def _represent_str(dumper, data: str):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


def _represent_flow(dumper, data):
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(FlowList, _represent_flow)


def dump_all(documents: list, header: str = "") -> str:
    body = yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=1 << 30, explicit_start=True)
    return header + body


def dump(document, header: str = "") -> str:
    body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=1 << 30)
    return header + body
