"""The fast YAML writer must write exactly what PyYAML's emitter writes."""

from __future__ import annotations

import glob

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from trainspec.targets import yamlout

from helpers import GOLDEN

scalars = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
    st.text(alphabet="ab :#-{}[]'\"\n\t$()|>!&*%@`,.=~?\u2028\x85", max_size=12),
    st.integers(-10**6, 10**6), st.booleans(), st.none(), st.sampled_from(["on", "yes", "1.5", "0x1F", "", "-", "..."]),
)
keys = st.one_of(st.text(alphabet="abcXYZ09_-./: #'\"\n", max_size=8), st.sampled_from(["on", "1", "a b"]))
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4),
                            st.lists(st.integers(0, 300), max_size=5).map(yamlout.FlowList)),
    max_leaves=25,
)


@pytest.mark.slow  # 1,500 generated documents; every golden file is compared in the fast set
@settings(max_examples=1500, deadline=None)
@given(st.lists(documents, min_size=1, max_size=3))
def test_fast_writer_equals_pyyaml(docs):
    assert yamlout.dump_all(docs) == yamlout.reference_dump_all(docs)
    for doc in docs:
        assert yamlout.dump(doc) == yaml.dump(doc, **yamlout._OPTIONS)


def test_fast_writer_equals_pyyaml_on_every_golden_file():
    files = sorted(glob.glob(str(GOLDEN / "*" / "*.yaml")))
    assert files
    for path in files:
        with open(path) as handle:
            docs = [d for d in yaml.safe_load_all(handle) if d is not None]
        assert yamlout.dump_all(docs) == yamlout.reference_dump_all(docs), path
