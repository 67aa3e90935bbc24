"""The limits: what the cluster (or Linux, or Docker Compose) enforces, and trainspec's own bounds; one
table every reader, writer and check reads, importing nothing of trainspec's but the error it raises.

The checks of a plan against them are plan_limits.py's; each returns `LimitProblem`s (this module's):
the number that breaks the limit, the limit, and which target (if any) avoids it.

- Linux MAX_ARG_STRLEN (all targets): no argument or `NAME=value` environment string of a
  process may exceed 131,072 bytes, whoever sets it (a literal, a ConfigMap reference the
  kubelet resolves, or a training operator) — execve fails with "argument list too long".
  Topology values grow with the replica count: TF_CONFIG carries the whole cluster, and
  TRAINSPEC_HOSTS_<ROLE> every host of a role.
- Kubernetes ConfigMap data, 1 MiB (k8s, helm: the whole topology; kubeflow, volcano: the
  host lists).
- Kubernetes annotations, 256 KiB in total per object (k8s, kubeflow, volcano, helm).
- Kueue's queue-name label (scheduling-names).

No target is named in either: each target's `TargetRules.limits` (targets/<name>/checks.py or its
`__init__.py`) composes the checks that apply to its output, and adds its own (the compose
file's size, the TrainJob CRD's limits, the Volcano Job's object size and schedulerName).

Below those, trainspec's own bounds (issue 32: a small input must not make unbounded work), one
table for every reader and writer; docs/reliability.md lists them with their values:

- what one YAML or JSON text may be (`MAX_FILE_BYTES`), hold after its aliases are expanded
  (`MAX_NODES` values, `MAX_EXPANDED_BYTES` of scalar text) and how deep it may nest
  (`MAX_DEPTH`): specs, manifests (`import`, `run`, `apply`), compose files, values files and
  the text a chart renders all go through compiler/loader.py;
- what one compiled file may be (`MAX_OUTPUT_BYTES`, every target; estimated from the plan
  before rendering by `output_size`, and the writer stops at it as the backstop);
- what one expansion may make, checked before it is made (`MAX_EXPANSION_BYTES`): the kubelet's
  `$(VAR)` references, Compose interpolation; what a spec's JSON patches add (`MAX_PATCH_BYTES`:
  `add`, `replace`, and `copy`, which can double a document each time);
- the emulator's bytes on the host: ConfigMap and Secret files on the tmpfs per run
  (`MAX_TMPFS_BYTES`), saved container output per replica (`MAX_SAVED_LOG_BYTES`);
- git output `diff` reads (`MAX_GIT_TREE_BYTES` for `git ls-tree -r`, a file's `git show` as
  `MAX_FILE_BYTES`).
"""

from typing import NamedTuple

from .errors import UsageError

# --- trainspec's own bounds (docs/reliability.md, "Bounds on every amplification") -----------------

MAX_FILE_BYTES = 16 * 1024 * 1024  # one spec, manifest, compose or values file, or a chart's rendered text
MAX_NODES = 1_000_000  # values in one YAML document after its aliases are expanded
MAX_EXPANDED_BYTES = MAX_FILE_BYTES  # scalar text of one document after aliases: no more than a file may hold
MAX_DEPTH = 64  # nesting of one document (YAML or JSON)
MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # one compiled file, every target (compose's file limit since issue 15)
MAX_EXPANSION_BYTES = 1024 * 1024  # one value made by `$(VAR)`, Compose interpolation; a patch's copied value
MAX_PATCH_BYTES = 4 * 1024 * 1024  # what a spec's patches may add to one target's output, `copy` included
MAX_TMPFS_BYTES = 64 * 1024 * 1024  # ConfigMap and Secret files one run writes to the host's /dev/shm
MAX_SAVED_LOG_BYTES = 64 * 1024 * 1024  # one replica's saved output (the log and its timestamps)
MAX_GIT_TREE_BYTES = 64 * 1024 * 1024  # `git ls-tree -r` of the revision `diff` compares


class BoundExceeded(UsageError):
    """A bound of this module reached while making something (exit 2, as any bad input): what was being
    made, the bound, and what to do instead."""

    def __init__(self, what: str, limit: int, hint: str = "", where: str = ""):
        super().__init__(f"{what} would be over {limit} bytes", where=where,
                         expected=f"at most {limit} bytes (docs/reliability.md, bounds)", hint=hint)
        self.what = what
        self.limit = limit

MAX_ARG_STRLEN = 32 * 4096  # bytes, including the terminating NUL (linux/binfmts.h)
CONFIG_MAP_MAX_BYTES = 1024 * 1024  # k8s.io/api core/v1 validation: sum of data values
ANNOTATIONS_MAX_BYTES = 256 * 1024  # apimachinery ValidateAnnotationsSize: sum of keys and values
ANNOTATIONS_RESERVE = 2048  # trainspec's own annotations (trainspec.dev/*) on top of the user's

HOST_LISTS = "TRAINSPEC_HOSTS_"  # the topology keys of an operator target's ConfigMap (the operator gives the rest)


class LimitProblem(NamedTuple):  # not a frozen dataclass: cheaper at start-up
    paths: tuple[tuple, ...]  # where it is in the spec, best first (the error is put at the first one found)
    message: str
    expected: str
    hint: str


# --- trainspec's own bound on every target's output ------------------------------------------------

OUTPUT_POD_BYTES = 3072  # a pod template's own text in a target's file (k8s: its Job and Service), measured
OUTPUT_STRING_BYTES = 8  # the indentation, dash and quotes around each string written


def text_bytes(value, limit: int | None = None) -> int:
    """About how many bytes `value` (strings, numbers, lists, tuples, NamedTuples, mappings) takes when
    written, without writing it; stops counting past `limit`.  Iterative: any depth."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + OUTPUT_STRING_BYTES
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif item is not None:
            total += OUTPUT_STRING_BYTES
        if limit is not None and total > limit:
            break
    return total
