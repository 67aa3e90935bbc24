"""Issue 23, security round three: files from others never reach the host. One case (or more) per
finding, written from scratch; none needs Docker (DOCKER_HOST points nowhere, so anything that got
past the checks would say "cannot reach the Docker daemon" instead of the refusal asserted).
The Docker half is tests/emulator/engine/test_grants_ports_gc_docker.py."""

from __future__ import annotations

import copy
import io
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from trainspec.compiler.errors import UsageError
from trainspec.emulator.console.table import Console
from trainspec.emulator.engine.preflight import map_claims
from trainspec.emulator.host.filesvol import FilesDir, sweep, tmpfs_root
from trainspec.emulator.host.grants import parse_grants, special_files
from trainspec.emulator.host.paths import check_host_paths, resolve_bind
from trainspec.emulator.model.job import Mount
from trainspec.emulator.model.masking import masker
from trainspec.emulator.model.names import check_names
from trainspec.emulator.model.ports import Port, bindings, compose_port, k8s_port
from trainspec.emulator.readers import dispatch
from trainspec.emulator.readers.interpolation import compose_env, interpolate
from trainspec.termsafe import neutralise

ROOT = Path(__file__).resolve().parents[2]
NO_DAEMON = {"DOCKER_HOST": "unix:///nonexistent/trainspec-round3.sock", "NO_COLOR": "1"}
DAEMON_ERROR = "cannot reach the Docker daemon"


def cli(*args, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    full = {**os.environ, **NO_DAEMON, **(env or {})}
    return subprocess.run([sys.executable, "-m", "trainspec", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=full)


def clean_refusal(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, r.stdout + r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    return r.stderr


def k8s_docs() -> list[dict]:
    return [d for d in yaml.safe_load_all((ROOT / "golden/tf-ps/k8s.yaml").read_text()) if d]


def first_job(docs: list[dict]) -> dict:
    return next(d for d in docs if d["kind"] == "Job")


def write_k8s(tmp: Path, edit, name: str = "k8s.yaml") -> Path:
    docs = k8s_docs()
    edit(docs)
    path = tmp / name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def with_host_path(host: str, read_only: bool = False):
    def edit(docs):
        pod = first_job(docs)["spec"]["template"]["spec"]
        pod.setdefault("volumes", []).append({"name": "h", "hostPath": {"path": host}})
        pod["containers"][0].setdefault("volumeMounts", []).append(
            {"name": "h", "mountPath": "/h", **({"readOnly": True} if read_only else {})})
    return edit


def load_model(path: Path, tmp: Path, **kw):
    return dispatch.load(str(path), state_dir=str(tmp / "st"), check_missing=False, **kw)


def host_mounts(job) -> list[Mount]:
    return [m for r in job.replicas for c in [*r.init_containers, r.main] for m in c.mounts if m.host_path]


# -- 1. host paths: only what the user named, read-only unless :rw ------------------------------

@pytest.mark.parametrize("where", ["repo-git", "venv", "home-bin"])
def test_a_compiled_file_cannot_mount_a_host_folder_by_itself(tmp_path, where):
    """Finding 1: a repository's .git, trainspec's venv, ~/bin under an allowed root: no longer reachable."""
    target = tmp_path / where
    target.mkdir()
    err = clean_refusal(cli("run", write_k8s(tmp_path, with_host_path(str(target))), cwd=tmp_path))
    assert f"--mount-host {target}" in err and "did not name on the command line" in err
    assert DAEMON_ERROR not in err


def test_a_spec_hostpath_and_a_compose_bind_need_the_option_too(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    spec = yaml.safe_load((ROOT / "tests/emulator/specs/flaky.yaml").read_text())
    spec["spec"]["volumes"].append({"name": "h", "mountPath": "/h", "source": {"hostPath": str(data)}})
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    assert "--mount-host" in clean_refusal(cli("run", "spec.yaml", cwd=tmp_path))
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump(
        {"services": {"worker-0": {"image": "x", "volumes": ["./data:/data:rw"]}}}))
    assert f"--mount-host {data}" in clean_refusal(cli("run", "compose.yaml", cwd=tmp_path))
    # named: past the host-path rules (the next step is the daemon)
    r = cli("run", "compose.yaml", "--mount-host", "data", cwd=tmp_path)
    assert DAEMON_ERROR in clean_refusal(r)


def test_a_grant_is_read_only_unless_rw(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    job = load_model(write_k8s(tmp_path, with_host_path(str(data))), tmp_path)
    notes = check_host_paths(job, str(tmp_path / "st"), grants=parse_grants([str(tmp_path)]))
    assert all(m.read_only for m in host_mounts(job)) and "read-only" in notes[0] and ":rw" in notes[0]
    job = load_model(write_k8s(tmp_path, with_host_path(str(data))), tmp_path)
    assert check_host_paths(job, str(tmp_path / "st"), grants=parse_grants([f"{data}:rw"])) == []
    assert not any(m.read_only for m in host_mounts(job))


def test_a_claim_is_read_only_unless_rw(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    spec = yaml.safe_load((ROOT / "tests/emulator/specs/flaky.yaml").read_text())
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    job = load_model(tmp_path / "s.yaml", tmp_path)
    claim = next(m for r in job.replicas for m in r.main.mounts if m.root).root.rsplit("/", 1)[1]
    notes = map_claims(job, [f"{claim}={out}"], tmp_path / "st")
    assert notes and "read-only" in notes[0] and all(m.read_only for m in host_mounts(job))
    job = load_model(tmp_path / "s.yaml", tmp_path)
    assert map_claims(job, [f"{claim}={out}:rw"], tmp_path / "st") == []
    assert not any(m.read_only for m in host_mounts(job))


def test_sockets_and_devices_inside_a_mounted_folder_are_refused(tmp_path):
    """Finding 2: ssh-agent's socket in a folder mounted read-only."""
    agent = tmp_path / "ssh-x" / "deep"
    agent.mkdir(parents=True)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(agent / "agent.1"))
    try:
        assert "unix socket" in special_files(str(tmp_path / "ssh-x"))
        job = load_model(write_k8s(tmp_path, with_host_path(str(tmp_path / "ssh-x"), read_only=True)), tmp_path)
        with pytest.raises(UsageError, match="agent.1 is a unix socket"):
            check_host_paths(job, str(tmp_path / "st"), grants=parse_grants([str(tmp_path)]))
    finally:
        sock.close()
    assert "device node" in special_files("/dev/null")


def test_at_mount_time_the_real_path_must_stay_inside_the_grant(tmp_path):
    (tmp_path / "granted").mkdir()
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "granted" / "link"
    link.symlink_to(tmp_path / "elsewhere")
    m = Mount("/x", "bind", str(link), True, host_path=True, grant=str(tmp_path / "granted"))
    with pytest.raises(UsageError, match="not inside a path named with --mount-host"):
        resolve_bind(m, str(tmp_path / "st"), allow_host_path=False)
    m = Mount("/x", "bind", str(tmp_path / "granted"), True, host_path=True)   # never checked: no grant
    with pytest.raises(UsageError, match="not inside a path named"):
        resolve_bind(m, str(tmp_path / "st"), allow_host_path=True)


def test_system_paths_stay_refused_even_when_named(tmp_path):
    err = clean_refusal(cli("run", write_k8s(tmp_path, with_host_path("/etc", read_only=True)), "--mount-host",
                            "/etc", cwd=tmp_path))
    assert "refusing to mount host system paths" in err


def test_a_chart_with_a_hostpath_needs_the_option(tmp_path):
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    chart = _chart(tmp_path)
    (tmp_path / "data").mkdir()
    (chart / "templates" / "job.yaml").write_text(yaml.safe_dump(_job_with(hostpath=str(tmp_path / "data"))))
    assert f"--mount-host {tmp_path / 'data'}" in clean_refusal(cli("run", chart, cwd=tmp_path))


# -- 2. chart folders and compose projects: nothing from outside them -----------------------------

def _chart(tmp: Path) -> Path:
    chart = tmp / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    return chart


def _job_with(env_value: str = "x", hostpath: str | None = None) -> dict:
    pod: dict = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox",
                                                           "env": [{"name": "V", "value": env_value}]}]}
    if hostpath:
        pod["volumes"] = [{"name": "h", "hostPath": {"path": hostpath}}]
        pod["containers"][0]["volumeMounts"] = [{"name": "h", "mountPath": "/h"}]
    labels = {"trainspec.dev/job": "c", "trainspec.dev/role": "worker", "trainspec.dev/index": "0"}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "c-worker-0", "labels": labels},
            "spec": {"template": {"metadata": {"labels": labels},
                                  "spec": pod}}}


@pytest.mark.parametrize("link_to", ["secret-file", "/proc/self/environ"])
def test_chart_files_are_the_charts_own(tmp_path, link_to):
    """Finding 3: `.Files.Get` of a link to a 0600 file, or to /proc/self/environ."""
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    secret = tmp_path / "secret-file"
    secret.write_text("TOP-SECRET-VALUE-123")
    secret.chmod(0o600)
    chart = _chart(tmp_path)
    (chart / "files").mkdir()
    (chart / "files" / "token").symlink_to(secret if link_to == "secret-file" else link_to)
    (chart / "templates" / "job.yaml").write_text(
        yaml.safe_dump(_job_with("PLACEHOLDER")).replace("PLACEHOLDER", '{{ .Files.Get "files/token" | quote }}'))
    r = cli("run", chart, cwd=tmp_path, env={"CANARY_ENV": "CANARY-VALUE-456"})
    err = clean_refusal(r)
    assert "files/token is a symlink that leads out of the chart folder" in err
    for leaked in ("TOP-SECRET-VALUE-123", "CANARY-VALUE-456"):
        assert leaked not in r.stdout + r.stderr
    assert not list(tmp_path.rglob("state.json"))


def test_chart_template_links_and_fifos_are_refused_but_inner_links_work(tmp_path):
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    chart = _chart(tmp_path)
    outside = tmp_path / "outside.yaml"
    outside.write_text(yaml.safe_dump(_job_with()))
    (chart / "templates" / "job.yaml").symlink_to(outside)
    assert "templates/job.yaml is a symlink" in clean_refusal(cli("run", chart, cwd=tmp_path))
    (chart / "templates" / "job.yaml").unlink()
    os.mkfifo(chart / "templates" / "fifo.yaml")
    assert "not a regular file" in clean_refusal(cli("run", chart, cwd=tmp_path, timeout=30))
    (chart / "templates" / "fifo.yaml").unlink()
    (chart / "job-source.yaml").write_text(yaml.safe_dump(_job_with()))
    (chart / "templates" / "job.yaml").symlink_to(chart / "job-source.yaml")   # inside the chart: fine
    job = load_model(chart, tmp_path)
    assert [r.name for r in job.replicas] == ["c-worker-0"]


def _compose(tmp: Path, env: dict, name: str = "compose.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump({"services": {"worker-0": {"image": "busybox", "environment": env}}}))
    return path


def test_compose_interpolation_never_sees_the_whole_environment(tmp_path, monkeypatch):
    """Finding 4: `${ANY_VAR}` from the user's shell; `- NAME` in a list takes nothing from it either."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "host-secret-789")
    path = _compose(tmp_path, {"A": "${AWS_SECRET_ACCESS_KEY}", "B": "${AWS_SECRET_ACCESS_KEY:-dflt}"})
    job = load_model(path, tmp_path)
    assert {e.name: e.value for e in job.replicas[0].main.env} == {"A": "", "B": "dflt"}
    job = load_model(path, tmp_path, env_options=["AWS_SECRET_ACCESS_KEY"])   # passed by name: seen
    assert job.replicas[0].main.env[0].value == "host-secret-789"
    path.write_text(yaml.safe_dump({"services": {"worker-0": {"image": "busybox",
                                                              "environment": ["AWS_SECRET_ACCESS_KEY"]}}}))
    assert load_model(path, tmp_path).replicas[0].main.env[0].value == ""
    assert interpolate("${AWS_SECRET_ACCESS_KEY}") == ""


def test_dotenv_only_as_a_regular_file_in_the_project(tmp_path):
    creds = tmp_path / "credentials"
    creds.write_text("aws_secret_access_key=from-credentials-000\n")
    project = tmp_path / "p"
    project.mkdir()
    (project / ".env").symlink_to(creds)
    path = _compose(project, {"K": "${aws_secret_access_key}"})
    with pytest.raises(UsageError, match=r"\.env is not a regular file"):
        load_model(path, tmp_path)
    err = clean_refusal(cli("run", path, cwd=tmp_path))
    assert "from-credentials-000" not in err
    (project / ".env").unlink()
    (project / ".env").write_text("K2=v\n")
    assert compose_env(str(path)) == {"K2": "v"}
    assert compose_env(str(path), [str(creds)]) == {"aws_secret_access_key": "from-credentials-000"}  # named


def test_an_interpolation_error_never_prints_a_value(tmp_path):
    path = _compose(tmp_path, {"X": "${MISSING:?${PASSED}}"})
    r = cli("run", path, "-e", "PASSED=value-that-must-not-show", cwd=tmp_path)
    err = clean_refusal(r)
    assert "required variable MISSING" in err and "value-that-must-not-show" not in err


# -- 3. secrets: tmpfs only, recorded before, swept by gc, never printed ----------------------------

def test_the_files_folder_is_recorded_before_it_exists_and_gc_finds_it(tmp_path):
    """Finding 6: a SIGKILL at any moment leaves a record `trainspec gc` reads (not container labels)."""
    try:
        tmpfs_root()
    except UsageError:
        pytest.skip("no tmpfs here")
    record = tmp_path / "runs" / "j-abc123" / "files-dir"
    files = FilesDir("j-abc123", record=str(record), supervisor=lambda: "elsewhere-host:1:1")
    files.write("worker-0-main", Mount("/s", "files", "s", True, [], secret=True))
    assert record.exists() and files.path and os.path.isdir(files.path)
    assert sweep(tmp_path, lambda rid, sup: True) == [] and os.path.isdir(files.path)   # alive: kept
    assert sweep(tmp_path, lambda rid, sup: False) == [("j-abc123", files.path)]
    assert not os.path.exists(files.path) and not record.exists()


def test_a_nul_byte_in_a_secret_env_value_is_refused_without_the_value(tmp_path):
    """Finding 5: Docker quoted the value in its error; now refused before any engine call."""
    import base64

    def edit(docs):
        docs.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"},
                     "data": {"t": base64.b64encode(b"sekr3t-\x00-tail").decode()}})
        c = first_job(docs)["spec"]["template"]["spec"]["containers"][0]
        c.setdefault("env", []).append({"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "t"}}})
    r = cli("run", write_k8s(tmp_path, edit), cwd=tmp_path)
    err = clean_refusal(r)
    assert "TOKEN" in err and "NUL" in err and "sekr3t" not in err and "tail" not in err
    assert not list(tmp_path.rglob("state.json"))


def test_bad_base64_is_an_error_not_an_empty_value(tmp_path):
    def edit(docs):
        docs.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "data": {"t": "!!not-b64"}})
    err = clean_refusal(cli("run", write_k8s(tmp_path, edit), cwd=tmp_path))
    assert re.search(r"k8s.yaml:\d+:\d+: data.t: not valid base64", err) and "not-b64" not in err


def test_the_mask_covers_quoted_forms():
    mask = masker([b"abc\x00def", b'quo"te-value'])
    assert mask('env "abc\\x00def"') == 'env "******"'          # Python's repr, Go's %q
    assert mask('{"v": "abc\\u0000def"}') == '{"v": "******"}'  # JSON
    assert mask('got "quo\\"te-value"') == 'got "******"'


# -- 4. ports: the address and protocol asked for, only declared ones -------------------------------

def test_ports_keep_host_ip_and_protocol():
    assert compose_port("127.0.0.1:18081:80/udp", "x") == Port(80, "UDP", 18081, "127.0.0.1")
    assert compose_port({"target": 80, "published": "18082", "host_ip": "127.0.0.1"}, "x") == \
        Port(80, "TCP", 18082, "127.0.0.1")
    assert compose_port("22", "x") == Port(22)       # container port only: never published
    assert k8s_port({"containerPort": 53, "hostPort": 1053, "hostIP": "127.0.0.1", "protocol": "UDP"}, "x") == \
        Port(53, "UDP", 1053, "127.0.0.1")
    assert bindings([Port(80, "UDP", 18081, "127.0.0.1"), Port(22), Port(8080, "TCP", 18080)], "") == \
        {"80/udp": ("127.0.0.1", 18081), "8080/tcp": 18080}   # --publish-all-interfaces
    # no address named: loopback only (issue 32); a named one is kept, 0.0.0.0 included
    assert bindings([Port(80, "TCP", 9), Port(81, "TCP", 10, "0.0.0.0")]) == \
        {"80/tcp": ("127.0.0.1", 9), "81/tcp": ("0.0.0.0", 10)}
    for bad in ("8000-8010:8000-8010", "1.2.3.4.5:80:80", "x:80", "80/icmp", "70000:80"):
        with pytest.raises(UsageError):
            compose_port(bad, "x")


# -- 5. the terminal: control characters escaped; names checked before Docker -----------------------

def test_neutralise_escapes_every_control_sequence():
    hostile = "a\x1b]0;title\x07b\x1b]52;c;cGF5bG9hZA==\x07c\x1b[2Jd\rjob SUCCEEDED\u202eevil\x9b"
    out = neutralise(hostile, newlines=False)
    assert not any(ord(ch) < 32 or 0x7f <= ord(ch) <= 0x9f or ch == "\u202e" for ch in out)
    assert "\\x1b]0;title\\x07" in out and "\\x0d" in out and "\\u202e" in out
    assert neutralise("line\nnext") == "line\nnext" and neutralise("a\nb", newlines=False) == "a\\nb"


def test_container_output_is_neutralised_even_without_colour():
    buf = io.StringIO()
    console = Console(["worker-0"], buf, "never")
    console.log("worker-0", "hi\x1b]0;pwned\x07\x1b]52;c;Zm9v\x07\r\x1b[2J")
    console.note("from a file: \x1b[2Jname")
    assert "\x1b" not in buf.getvalue() and "\r" not in buf.getvalue() and "\\x1b]0;pwned" in buf.getvalue()


def test_names_from_a_file_are_checked_and_printed_escaped(tmp_path):
    def edit(docs):
        first_job(docs)["metadata"]["name"] = "tf-ps-ps-0\r\x1b[2Jjob tf-ps SUCCEEDED"
    err = clean_refusal(cli("run", write_k8s(tmp_path, edit), cwd=tmp_path))
    # the API server's name rule refuses it first (compiler/apiserver), the value escaped as Go quotes it
    assert "\x1b" not in err and "\r" not in err and "metadata.name: Invalid value: " in err and "\\r\\x1b" in err
    job = load_model(write_k8s(tmp_path, lambda d: None), tmp_path)
    job.replicas[0].main.name = "Bad_Name"
    with pytest.raises(UsageError, match="container name in .* 'Bad_Name' is not a valid name"):
        check_names(job)


# -- 6. sizes: bounded before anything starts -------------------------------------------------------

@pytest.mark.parametrize("completions", [10_000, 10**12])
def test_huge_completions_are_refused_at_once(tmp_path, completions):
    def edit(docs):
        first_job(docs)["spec"].update(completions=completions, parallelism=completions, completionMode="Indexed")
    err = clean_refusal(cli("run", write_k8s(tmp_path, edit), cwd=tmp_path, timeout=30))
    assert "spec.completions" in err and DAEMON_ERROR not in err


def test_a_jobset_whose_product_is_too_big_is_refused(tmp_path):
    docs = [d for d in yaml.safe_load_all((ROOT / "golden/tf-ps/jobset.yaml").read_text()) if d]
    js = next(d for d in docs if d["kind"] == "JobSet")
    for rj in js["spec"]["replicatedJobs"]:
        rj["replicas"] = 40
        rj["template"]["spec"].update(completions=40, parallelism=40)
    (tmp_path / "js.yaml").write_text(yaml.safe_dump_all(docs))
    assert "the emulator runs at most 1000" in clean_refusal(cli("run", "js.yaml", cwd=tmp_path, timeout=30))


# -- 7. malformed compiled files: exit 2 with the field path; unhonoured fields named ----------------

def _pod(d):
    return first_job(d)["spec"]["template"]["spec"]


def _c0(d):
    return _pod(d)["containers"][0]


def _vol(d, vol):
    _pod(d).setdefault("volumes", []).append({"name": "v", **vol})
    _c0(d).setdefault("volumeMounts", []).append({"name": "v", "mountPath": "/v"})


def test_a_volume_whose_source_is_null_is_an_empty_dir_as_the_server_defaults_it(tmp_path):
    # kube-apiserver v1.36.2 stores `{name: v, persistentVolumeClaim: null}` as `{name: v, emptyDir: {}}`
    # (SetDefaults_Volume): not a refusal, and never a crash of the reader
    job = load_model(write_k8s(tmp_path, lambda d: _vol(d, {"persistentVolumeClaim": None})), tmp_path)
    (mount,) = [m for r in job.replicas[:1] for m in r.main.mounts if m.target == "/v"]
    assert mount.kind == "emptydir"


MALFORMED = {
    "image --help": (lambda d: _c0(d).__setitem__("image", "--help"), "containers[0].image"),
    "completions abc": (lambda d: first_job(d)["spec"].__setitem__("completions", "abc"), "spec.completions"),
    "containerPort http": (lambda d: _c0(d).__setitem__("ports", [{"containerPort": "http"}]), "containerPort"),
    "hostPort 70000": (lambda d: _c0(d).__setitem__("ports", [{"containerPort": 1, "hostPort": 70000}]), "hostPort"),
    "containers a string": (lambda d: _pod(d).__setitem__("containers", "x"), "spec.template.spec.containers"),
    "volumes of strings": (lambda d: _pod(d).__setitem__("volumes", ["x"]), "spec.template.spec.volumes[0]"),
    "env a mapping": (lambda d: _c0(d).__setitem__("env", {"A": "b"}), "containers[0].env"),
    "metadata a list": (lambda d: first_job(d).__setitem__("metadata", ["x"]), "metadata"),
    "period a string": (lambda d: _c0(d).__setitem__("livenessProbe", {"exec": {"command": ["true"]},
                                                                        "periodSeconds": "10"}), "periodSeconds"),
    "deadline a string": (lambda d: first_job(d)["spec"].__setitem__("activeDeadlineSeconds", "60"),
                          "activeDeadlineSeconds"),
    "sizeLimit lots": (lambda d: _vol(d, {"emptyDir": {"medium": "Memory", "sizeLimit": "lots"}}), "sizeLimit"),
    "binaryData bad": (lambda d: d.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"},
                                           "binaryData": {"k": "%%%"}}), "binaryData.k"),
    "args a number": (lambda d: _c0(d).__setitem__("args", 5), "containers[0].args"),
    "template a string": (lambda d: first_job(d)["spec"].__setitem__("template", "x"), "spec.template"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_compiled_files_are_exit_2_with_the_field(tmp_path, case):
    edit, field = MALFORMED[case]
    err = clean_refusal(cli("run", write_k8s(tmp_path, edit), cwd=tmp_path))
    assert field in err and str(tmp_path / "k8s.yaml") in err and DAEMON_ERROR not in err, err


def test_a_bind_to_proc_is_refused_in_compose_and_k8s(tmp_path):
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump(
        {"services": {"worker-0": {"image": "x", "volumes": ["/proc/1/root:/x"]}}}))
    clean_refusal(cli("run", "compose.yaml", "--mount-host", "/proc", cwd=tmp_path))
    err = clean_refusal(cli("run", write_k8s(tmp_path, with_host_path("/proc/1/root")), "--mount-host", "/proc",
                            cwd=tmp_path))
    assert "inside /proc" in err


REFUSED_POD_FIELDS = {
    "shareProcessNamespace": lambda d: _pod(d).__setitem__("shareProcessNamespace", True),
    "runtimeClassName": lambda d: _pod(d).__setitem__("runtimeClassName", "gvisor"),
    "apparmor": lambda d: first_job(d)["spec"]["template"]["metadata"].setdefault("annotations", {}).__setitem__(
        "container.apparmor.security.beta.kubernetes.io/tensorflow", "unconfined"),
    "seccompProfile": lambda d: _pod(d).__setitem__("securityContext", {"seccompProfile": "Unconfined"}),
    "volumes": lambda d: _vol(d, {"persistentVolumeClaim": {"claimName": "c"}, "hostPath": {"path": "/srv/x"}}),
    # and what held before round three
    "privileged": lambda d: _c0(d).__setitem__("securityContext", {"privileged": True}),
    "capabilities": lambda d: _c0(d).__setitem__("securityContext", {"capabilities": {"add": ["SYS_ADMIN"]}}),
    "hostPID": lambda d: _pod(d).__setitem__("hostPID", True),
    "hostNetwork": lambda d: _pod(d).__setitem__("hostNetwork", True),
}


@pytest.mark.parametrize("field", sorted(REFUSED_POD_FIELDS))
def test_pod_fields_the_emulator_cannot_honour_are_refused(tmp_path, field):
    err = clean_refusal(cli("run", write_k8s(tmp_path, REFUSED_POD_FIELDS[field]), cwd=tmp_path))
    assert field in err and DAEMON_ERROR not in err, err


def test_pod_fields_run_without_are_named_in_a_note(tmp_path):
    def edit(d):
        _pod(d)["dnsConfig"] = {"nameservers": ["192.0.2.1"]}
        _pod(d)["hostAliases"] = [{"ip": "192.0.2.2", "hostnames": ["x"]}]
    notes = " ".join(load_model(write_k8s(tmp_path, edit), tmp_path).notes)
    assert "dnsConfig is not applied" in notes and "hostAliases is not applied" in notes


@pytest.mark.parametrize("service,top", [
    ({"env_file": [".env"]}, {}), ({"configs": ["c"]}, {}), ({"secrets": ["s"]}, {}), ({"extends": {"service": "b"}}, {}),
    ({"net": "host"}, {}), ({"network_mode": "host"}, {}), ({"privileged": True}, {}), ({"cap_add": ["ALL"]}, {}),
    ({}, {"include": ["other.yaml"]}), ({}, {"volumes": {"v": {"driver_opts": {"o": "bind", "device": "/etc"}}}}),
    ({"ports": ["8000-8010:8000-8010"]}, {}),
])
def test_compose_fields_the_emulator_cannot_honour_are_refused(tmp_path, service, top):
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump(
        {"services": {"worker-0": {"image": "x", **service}}, **top}))
    err = clean_refusal(cli("run", "compose.yaml", cwd=tmp_path))
    assert next(iter(service or top)) in err and DAEMON_ERROR not in err, err


def test_compose_fields_run_without_are_named_in_a_note(tmp_path):
    svc = {"image": "x", "build": ".", "extra_hosts": ["a:192.0.2.1"], "dns": ["192.0.2.1"],
           "ulimits": {"nofile": 10}, "oom_score_adj": -500, "oom_kill_disable": True}
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump({"services": {"worker-0": svc}}))
    notes = " ".join(load_model(tmp_path / "compose.yaml", tmp_path).notes)
    for key in ("build", "extra_hosts", "dns", "ulimits", "oom_score_adj", "oom_kill_disable"):
        assert f"services.worker-0.{key} is not applied" in notes, key


def test_every_golden_file_still_passes_the_shape_checks(tmp_path):
    """The checks describe the real shapes: nothing trainspec writes is refused by them."""
    from trainspec.emulator.readers.shapes import check_documents
    from trainspec.emulator.readers.unhonoured import k8s_fields

    for path in sorted(ROOT.glob("golden/*/*.yaml")):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        if not (len(docs) == 1 and "services" in docs[0]):
            check_documents(copy.deepcopy(docs), str(path))
            k8s_fields(docs, str(path))


# -- 8. git: revisions and paths only ----------------------------------------------------------------

@pytest.mark.parametrize("ref", ["--output={out}:y", "HEAD:--output={out}", "-p:specs/tf-ps.yaml"])
def test_diff_never_hands_git_an_option(tmp_path, ref):
    out = tmp_path / "planted"
    r = cli("diff", "--", ref.format(out=out), ROOT / "specs/tf-ps.yaml", cwd=ROOT)
    assert "may not start with '-'" in clean_refusal(r)
    assert not out.exists()


@pytest.mark.parametrize("service,field", [
    ({"deploy": "x"}, "services.worker-0.deploy"), ({"environment": [{"A": 1}]}, "services.worker-0.environment"),
    ({"command": {"a": 1}}, "services.worker-0.command"), ({"healthcheck": {"retries": "3"}}, "healthcheck.retries"),
    ({"image": "--privileged"}, "services.worker-0.image"), ({"volumes": [["a"]]}, "services.worker-0.volumes[0]"),
])
def test_malformed_compose_files_are_exit_2_with_the_field(tmp_path, service, field):
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump({"services": {"worker-0": {"image": "x", **service}}}))
    err = clean_refusal(cli("run", "compose.yaml", cwd=tmp_path))
    assert field in err and DAEMON_ERROR not in err, err
