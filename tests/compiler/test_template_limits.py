"""Template limits (issue 15): a hostile template is a spec error at its field, never a hang,
an internal error or an exhausted machine."""

from __future__ import annotations

import json
import threading

import pytest

from trainspec.compiler import SpecErrors, template_limits
from trainspec.compiler.templating import EXPRESSION, Templates
from trainspec.targets import load_plans

SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: t}
spec:
  framework: pytorch
  image: busybox
  command: [python, train.py]
  args: [--x, ARG]
  roles: {master: {replicas: 1}, worker: {replicas: REPLICAS}}
"""

HOSTILE = {
    "{{ 10**5000 }}": "bits; the limit is 4096",
    "{{ (10**1000) * (10**1000) * (10**1000) * (10**1000) * (10**1000) }}": "a product of more than 4096 bits",
    "{{ 'x' * 10**9 }}": "repeating a value of length 1 1000000000 times",
    "{{ [1, 2] * 10**8 }}": "repeating a value of length 2",
    "{{ 'x' * 100000 + 'y' * 100000 }}": "the rendered text is 200000 characters",
    "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(1) }}": "template recursion is too deep",
    "{{ 'x' | center(10**9) }}": "needs more than",
    "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}":
        "needs more than",
    "{{ '%0999999999d' % 1 }}": "a format width of 999999999",
    "{{ '%*d' % (999999999, 1) }}": "a format width of 999999999",
    "{{ '{:>999999999}'.format(1) }}": "a format width of 999999999",
    "{{ '{:>{w}}'.format(1, w=999999999) }}": "a format width of 999999999",
    "{{ '{:.999999999f}'.format(1.5) }}": "a format width of 999999999",
    "{% for i in range(100000) %}xxxxxxxxxx{% endfor %}": "characters, more than the 131072 Linux passes",
    "{{ range(10**9) | list }}": "Range too big",
}


def _spec(tmp_path, arg: str, replicas: int = 1):
    path = tmp_path / "t.yaml"
    path.write_text(SPEC.replace("ARG", json.dumps(arg)).replace("REPLICAS", str(replicas)))
    return path


def _error(path) -> str:
    with pytest.raises(SpecErrors) as info:
        load_plans(str(path))
    # One field, one error, whichever limit stopped it first: under load the shared time budget can
    # stop the job-level args' second rendering (another role's) before its memory limit does.
    paths = {getattr(e, "path", None) for e in info.value.errors}
    assert len(paths) == 1, str(info.value)
    return str(info.value)


@pytest.mark.parametrize("template", list(HOSTILE))
def test_hostile_template_is_a_spec_error_at_its_field(tmp_path, template, monkeypatch):
    # A smaller memory cap than the default 512 MiB: the doubling loop reaches it in a second rather
    # than spending the time limit on copying half a gigabyte (the cap, not its size, is under test).
    monkeypatch.setattr(template_limits, "MEMORY_HEADROOM", 128 << 20)
    path = _spec(tmp_path, template)
    text = _error(path)
    # at the template's one `{{ }}` (after the opening quote), else at the string
    column = 16 if len(EXPRESSION.findall(template)) == 1 else 15
    assert text.startswith(f"{path}:8:{column}: spec.args[1]: "), text
    assert HOSTILE[template] in text, text


def test_ordinary_str_format_widths_still_render(tmp_path):
    (plan,) = load_plans(str(_spec(tmp_path, "{{ '{0:>{1}}'.format(7, 3) }}|{{ '{:08.2f}'.format(1.5) }}")))
    assert plan.roles[0].replicas[0].args[1] == "  7|00001.50"


def test_endless_loop_stops_at_the_time_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(template_limits, "TIMEOUT_SECONDS", 1.0)
    path = _spec(tmp_path, "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
    text = _error(path)
    assert "did not finish within 1s" in text and "TRAINSPEC_TEMPLATE_TIMEOUT" in text


def test_time_is_a_budget_for_the_whole_job(tmp_path, monkeypatch):
    """A template that is slow but not endless must not take (replicas x limit)."""
    monkeypatch.setattr(template_limits, "TIMEOUT_SECONDS", 1.0)
    slow = "{% for i in range(100000) %}{% for j in range(30) %}{% endfor %}{% endfor %}{{ index }}"
    templates = Templates()
    with pytest.raises(Exception) as info:
        for index in range(10_000):
            templates.render(slow, {"index": index})
    assert "did not finish within 1s" in str(info.value)


def test_total_output_of_a_job_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(template_limits, "MAX_TOTAL_OUTPUT", 10_000)
    path = _spec(tmp_path, "{{ index }}-" + "y" * 100, replicas=200)
    assert "render more than" in _error(path)


def test_limits_hold_off_the_main_thread(tmp_path):
    """The alarm and memory cap are main-thread only; operator and output limits are not."""
    path = _spec(tmp_path, "{{ 'x' * 10**9 }}")
    errors = []

    def work():
        try:
            load_plans(str(path))
        except SpecErrors as exc:
            errors.append(str(exc))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors and "repeating a value" in errors[0]


def test_resource_limits_are_restored(tmp_path):
    import resource
    import signal

    calls = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: calls.append(signum))
    try:
        before = resource.getrlimit(resource.RLIMIT_AS)
        _error(_spec(tmp_path, "{{ 'x' | center(10**9) }}"))
        assert resource.getrlimit(resource.RLIMIT_AS) == before
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        signal.raise_signal(signal.SIGALRM)  # someone else's alarm still reaches their handler
        assert calls == [signal.SIGALRM]
    finally:
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("template, guarded", [
    ("{{ hosts.worker[0] }}:{{ port }}", False),
    ("{{ hosts.ps | join(',') }}", False),
    ("{{ hosts.worker[0] ~ ':' ~ port }}", False),
    ("{{ index + 1 }}{% if index == 0 %}--chief{% endif %}", False),
    ("{% for h in hosts.worker %}{{ h }},{% endfor %}", True),
    ("{{ 'x' | center(5) }}", True),
    ("{{ job.name.upper() }}", True),
])
def test_plain_templates_skip_the_guard(template, guarded):
    from jinja2 import Environment

    assert template_limits.is_guarded(Environment().parse(template)) is guarded


def test_legitimate_templates_still_render(tmp_path):
    path = _spec(tmp_path, "{{ hosts.worker | join(',') }}|{% for i in range(3) %}{{ i * 2 }}{% endfor %}|{{ 2**10 }}",
                 replicas=3)
    (plan,) = load_plans(str(path))
    args = plan.role("worker").replicas[0].args
    assert args[1] == "t-worker-0:23456,t-worker-1:23456,t-worker-2:23456|024|1024"
