"""PyYAML imported through trainspec.compiler.pyyaml (its regexes compiled on first use) reads
and resolves exactly as PyYAML imported plainly: same values, same errors, in fresh interpreters."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import neutral_cwd

# Scalars that exercise every implicit resolver (bool, int, float, null, timestamp, merge, value),
# the pure-Python reader's non-printable check, and libyaml's loader and dumper.
PROBE = r"""
import json, sys
{importer}
docs = [
    "a: yes\nb: No\nc: 0x1F\nd: 0o17\ne: 017\nf: 1_000\ng: 1.5e3\nh: .inf\ni: -.NaN\nj: ~\nk: null\n",
    "t: 2001-12-14t21:59:43.10-05:00\nu: 2002-12-14\nv: 2001-12-14 21:59:43.10 -5\n",
    "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n",
    "s: '0b101'\nbin: 0b101\nsexa: 190:20:30\n= : 1\n",
]
out = []
for text in docs:
    for loader in (yaml.SafeLoader, yaml.CSafeLoader):
        out.append(repr(yaml.load(text, Loader=loader)))
for bad in ("a: \x07\n", "a: [1,\n"):
    for loader in (yaml.SafeLoader, yaml.CSafeLoader):
        try:
            yaml.load(bad, Loader=loader)
            out.append("no error")
        except yaml.YAMLError as exc:
            out.append(type(exc).__name__ + ": " + str(exc))
out.append(yaml.dump({"k": ["yes", "0x1", "1.5", "2001-12-14", "~", "a\u0007b"]}, Dumper=yaml.CSafeDumper))
out.append(yaml.dump({"k": ["yes", "0x1", "1.5", "2001-12-14", "~", "a\u0007b"]}, Dumper=yaml.SafeDumper))
print(json.dumps(out))
"""


def run(importer: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE.replace("{importer}", importer)], capture_output=True,
                          text=True, cwd=neutral_cwd(), check=True)
    return json.loads(done.stdout)


def test_lazily_compiled_pyyaml_reads_and_writes_as_pyyaml_does():
    lazy = run("from trainspec.compiler.pyyaml import yaml\n"
               "from trainspec.compiler.pyyaml import LazyPattern\n"
               "assert isinstance(yaml.reader.Reader.NON_PRINTABLE, LazyPattern), 'not lazy: nothing tested'")
    plain = run("import yaml")
    assert lazy == plain
    assert any("ReaderError" in line for line in plain)  # the reader's check did run


def test_a_process_that_imported_yaml_first_keeps_its_own():
    out = subprocess.run([sys.executable, "-c", "import re, yaml\n"
                          "from trainspec.compiler.pyyaml import yaml as again\n"
                          "assert again is yaml and isinstance(yaml.reader.Reader.NON_PRINTABLE, re.Pattern)\n"
                          "assert re.compile is re.__dict__['compile']"],
                         capture_output=True, text=True, cwd=neutral_cwd())
    assert out.returncode == 0, out.stderr
