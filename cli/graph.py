"""`trainspec graph`: a picture of a job's topology, from the plan's roles, replicas, ports and GPUs.

Who talks to whom follows each framework's wiring (see compiler/frameworks.py):
TensorFlow workers, chief and evaluator reach the parameter servers (without ps,
the workers and chief form one collective ring); PyTorch ranks rendezvous at
master-0; MXNet servers and workers register with the scheduler and workers
push to servers; the MPI launcher starts the workers over SSH.
"""

from __future__ import annotations

import re
import shutil
import subprocess

MAX_LISTED = 4  # replica host names shown per role before "… and N more"


def edges(framework: str, roles: list[str]) -> list[tuple[str, str, str]]:
    """(from role, to role, label) between roles present in the job."""
    have = set(roles)
    out: list[tuple[str, str, str]] = []

    def add(a: str, b: str, label: str) -> None:
        if a in have and b in have:
            out.append((a, b, label))

    if framework == "tensorflow":
        if "ps" in have:
            for role in ("chief", "worker", "evaluator"):
                add(role, "ps", "variables (gRPC)")
        else:
            add("chief", "worker", "collective (gRPC)")
            if "worker" in have and "chief" not in have:
                add("worker", "worker", "collective (gRPC)")
    elif framework == "pytorch":
        add("worker", "master", "rendezvous (MASTER_ADDR)")
    elif framework == "mxnet":
        for role in ("server", "worker"):
            add(role, "scheduler", "register (DMLC_PS_ROOT_URI)")
        add("worker", "server", "push/pull")
    elif framework == "mpi":
        add("launcher", "worker", "ssh + mpirun (hostfile)")
    return out


def _role_lines(role) -> list[str]:
    hosts = [r.address for r in role.replicas]
    shown = hosts[:MAX_LISTED] + ([f"… and {len(hosts) - MAX_LISTED} more"] if len(hosts) > MAX_LISTED else [])
    gpu = role.resources.gpu
    head = f"{role.name} × {role.count}" + (f" · {gpu} GPU each" if gpu else "")
    return [head] + shown


def _node_id(name: str) -> str:
    return "r_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def mermaid(plans) -> str:
    lines = ["flowchart LR"]
    for plan in plans:
        lines.append(f'  subgraph {_node_id(plan.name)}["{plan.name} ({plan.framework})"]')
        for role in plan.roles:
            label = "<br/>".join(_role_lines(role)).replace('"', "#quot;")
            lines.append(f'    {_node_id(plan.name + "_" + role.name)}["{label}"]')
        lines.append("  end")
        for a, b, label in edges(plan.framework, [r.name for r in plan.roles]):
            source, target = _node_id(f"{plan.name}_{a}"), _node_id(f"{plan.name}_{b}")
            lines.append(f'  {source} -->|"{label}"| {target}')
    return "\n".join(lines) + "\n"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot(plans) -> str:
    lines = ["digraph trainspec {", "  rankdir=LR;", '  node [shape=box, fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    for plan in plans:
        lines.append(f"  subgraph cluster_{_node_id(plan.name)} {{")
        lines.append(f"    label={_dot_quote(f'{plan.name} ({plan.framework})')};")
        for role in plan.roles:
            label = "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in _role_lines(role))
            lines.append(f'    {_node_id(plan.name + "_" + role.name)} [label="{label}"];')
        lines.append("  }")
        for a, b, label in edges(plan.framework, [r.name for r in plan.roles]):
            lines.append(f"  {_node_id(plan.name + '_' + a)} -> {_node_id(plan.name + '_' + b)} "
                         f"[label={_dot_quote(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def svg(plans) -> str:
    """Graphviz renders it locally (no network); without `dot` on PATH, a clear error."""
    from trainspec.compiler import UsageError

    program = shutil.which("dot")
    if not program:
        raise UsageError("--format svg needs Graphviz's `dot` on PATH (Debian: apt-get install graphviz); "
                         "or use --format dot / mermaid")
    result = subprocess.run([program, "-Tsvg"], check=False, input=dot(plans), capture_output=True, text=True,
                            timeout=60)
    if result.returncode != 0:
        raise UsageError(f"dot failed: {result.stderr.strip()}")
    return result.stdout


def render_graph(plans, fmt: str) -> str:
    return {"mermaid": mermaid, "dot": dot, "svg": svg}[fmt](plans)
