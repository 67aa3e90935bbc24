"""`trainspec schema`: the spec's JSON Schema, generated from the validator's field table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator
from test_spec_errors import BASE, CASES, spec_with

from trainspec.compiler import SpecErrors
from trainspec.compiler.fields import MAPPINGS
from trainspec.compiler.schema import json_schema, schema_text
from trainspec.targets import load_plans

from fuzzing import valid_specs
from helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "schema" / "trainspec.schema.json"
SPECS = sorted((ROOT / "specs").glob("*.yaml"))

# test_spec_errors cases whose mistake needs more than the document's shape (counts across
# roles, generated-name lengths, YAML text, templates): only the validator can see them.
NOT_STRUCTURAL = {"name-too-long", "two-chiefs", "ps-without-worker", "duplicate-key", "yaml-syntax",
                  "template-unknown-name", "template-unknown-role", "template-sandbox", "min-available", "no-image"}

# More mistakes an editor should underline: (id, spec text, JSON path of the error).
BAD = [
    ("role-unknown-field", spec_with("      replicas: 2\n", "      replicas: 2\n      gpus: 1\n"),
     "$.spec.roles.worker"),
    ("replicas-quoted", spec_with("replicas: 2", 'replicas: "2"'), "$.spec.roles.worker.replicas"),
    ("role-restart-enum", spec_with("      replicas: 2\n", "      replicas: 2\n      restartPolicy: Sometimes\n"),
     "$.spec.roles.worker.restartPolicy"),
    ("role-of-other-framework", spec_with("    ps:\n", "    master:\n"), "$.spec.roles"),
    ("probe-period-negative", spec_with("      replicas: 2\n", "      replicas: 2\n      probes:\n"
                                        "        readiness: {tcpSocket: {port: 2222}, periodSeconds: -1}\n"),
     "$.spec.roles.worker.probes.readiness.periodSeconds"),
    ("volume-no-source", spec_with("  roles:\n", "  volumes: [{name: d, mountPath: /d, source: {}}]\n  roles:\n"),
     "$.spec.volumes[0].source"),
    ("success-policy-typo", spec_with("  roles:\n", "  tensorflow: {successPolicy: AllWorker}\n  roles:\n"),
     "$.spec.tensorflow.successPolicy"),
    ("env-ref-unknown", spec_with("  roles:\n", "  env: {T: {secretRef: {name: a, key: b}}}\n  roles:\n"),
     "$.spec.env.T"),
    ("null-image", spec_with("  image: tf:2.15", "  image:"), "$.spec.image"),
]


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_committed_schema_is_what_trainspec_schema_prints():
    result = run_cli("schema")
    assert result.returncode == 0, result.stderr
    assert result.stdout == SCHEMA_FILE.read_text(), \
        "schema/trainspec.schema.json is stale: run `trainspec schema -o schema/trainspec.schema.json`"
    assert result.stdout == schema_text()


def test_schema_is_draft_2020_12_and_every_field_of_the_table_is_in_it():
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    for name, mapping in MAPPINGS.items():
        body = schema if name == "TrainingJob" else schema["$defs"][name]
        assert list(body["properties"]) == list(mapping.names), name
        assert body["additionalProperties"] is False


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_every_example_spec_is_accepted(validator, path):
    for doc in yaml.safe_load_all(path.read_text()):
        assert [e.message for e in validator.iter_errors(doc)] == []


STRUCTURAL = [c for c in CASES if c[0] not in NOT_STRUCTURAL]


@pytest.mark.parametrize("case", STRUCTURAL, ids=[c[0] for c in STRUCTURAL])
def test_structural_mistakes_of_the_error_table_are_rejected(validator, case):
    doc = yaml.safe_load(case[1])
    assert not validator.is_valid(doc), f"{case[0]}: the schema accepts what the validator refuses"


def test_the_error_table_is_mostly_structural():
    assert len(STRUCTURAL) >= 25
    assert NOT_STRUCTURAL <= {c[0] for c in CASES}


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_more_mistakes_are_rejected_at_their_field(validator, tmp_path, case):
    name, text, where = case
    doc = yaml.safe_load(text)
    paths = {e.json_path for e in validator.iter_errors(doc)}
    assert where in paths, paths
    if name != "null-image":  # the validator reads a key without a value as absent
        spec = tmp_path / "bad.yaml"
        spec.write_text(text)
        with pytest.raises(SpecErrors):
            load_plans(str(spec))


def test_base_spec_is_valid(validator):
    assert validator.is_valid(yaml.safe_load(BASE))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=valid_specs())
def test_schema_accepts_every_spec_the_validator_accepts(validator, doc):
    # valid_specs() draws documents that validate; the schema must never be stricter
    assert [f"{e.json_path}: {e.message}" for e in validator.iter_errors(doc)] == []


def test_output_file_and_bad_output_paths(tmp_path):
    out = tmp_path / "s.json"
    result = run_cli("schema", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text() == SCHEMA_FILE.read_text()
    result = run_cli("schema", "-o", str(tmp_path))
    assert result.returncode == 2 and "is a folder" in result.stderr and "Traceback" not in result.stderr
    result = run_cli("schema", "-o", str(out / "s.json"))  # under a file
    assert result.returncode == 2 and "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_compile_path_does_not_import_the_schema_generator():
    code = ("import sys; from trainspec.cli import main; "
            f"rc = main(['validate', {str(SPECS[0])!r}]); "
            "print(rc, 'trainspec.compiler.schema' in sys.modules, 'jsonschema' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-3:] == ["0", "False", "False"]


@pytest.mark.parametrize("doc", ["README.md", "docs/spec.md"])
def test_documented_modeline_points_at_the_schema_from_the_specs_folder(doc):
    import re

    lines = re.findall(r"^# yaml-language-server: \$schema=(\S+)$", (ROOT / doc).read_text(), re.M)
    assert lines, f"{doc} shows no yaml-language-server line"
    for target in lines:
        assert (ROOT / "specs" / target).resolve() == SCHEMA_FILE


def test_every_field_type_has_a_schema():
    """A field of each type the table knows (the ones a new spec field would use) gives a valid schema."""
    from trainspec.compiler.fields import Field
    from trainspec.compiler.schema import field_schema

    samples = [Field("a", "string", enum=("x", "y")), Field("b", "string", pattern="^/", max_length=9),
               Field("c", "integer", minimum=0, maximum=3), Field("d", "boolean"), Field("e", "quantity"),
               Field("f", "port"), Field("g", "nproc"), Field("h", "strings"), Field("i", "env"),
               Field("j", "object", of="resources"), Field("k", "object"), Field("l", "list", of="volume"),
               Field("m", "list", of="object"), Field("n", "map", of="string", keys="^[a-z]+$"),
               Field("o", "map", of="quantity"), Field("p", "list", of="string")]
    for item in samples:
        schema = {"$defs": json_schema()["$defs"], **field_schema(item)}
        Draft202012Validator.check_schema(schema)
    quantities = Draft202012Validator({"$defs": {}, **field_schema(Field("o", "map", of="quantity"))})
    assert quantities.is_valid({"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 1})
    assert not quantities.is_valid({"memory": "1 GB"})
    with pytest.raises(ValueError):
        field_schema(Field("q", "stirng"))
