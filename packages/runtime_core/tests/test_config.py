from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sciencediscovery.runtime_core import ConfigurationError
from sciencediscovery.runtime_core.config import choice, flag, positive_int


@given(st.integers(1, 10**9))
def test_positive_int_reads_any_positive_integer(value):
    assert positive_int({"X": f" {value} "}, "X") == value


@pytest.mark.parametrize("raw", ["0", "-3", "1.5", "ten", "1e3"])
def test_positive_int_rejects_bad_values_naming_the_variable(raw):
    with pytest.raises(ConfigurationError, match="MODEL_MAX_TOKENS: must be a positive integer") as caught:
        positive_int({"MODEL_MAX_TOKENS": raw}, "MODEL_MAX_TOKENS")
    assert caught.value.variable == "MODEL_MAX_TOKENS"


def test_positive_int_default_when_unset_or_blank():
    assert positive_int({}, "X", 7) == 7
    assert positive_int({"X": "  "}, "X", 7) == 7


def test_choice_is_trimmed_and_case_insensitive():
    modes = ("dynamic", "shadow", "legacy")
    assert choice({"M": "  Shadow "}, "M", modes, "dynamic") == "shadow"
    assert choice({}, "M", modes, "dynamic") == "dynamic"
    with pytest.raises(ConfigurationError, match="M: must be one of dynamic, shadow, legacy; got 'fast'"):
        choice({"M": "fast"}, "M", modes, "dynamic")


def test_flag_values():
    assert flag({"T": "1"}, "T") and flag({"T": "On"}, "T")
    assert not flag({}, "T") and not flag({"T": "0"}, "T")
    with pytest.raises(ConfigurationError, match="T:"):
        flag({"T": "maybe"}, "T")


def test_read_data_file_parses_toml_and_json_and_names_the_file(tmp_path):
    from sciencediscovery.runtime_core.config import DataFileError, read_data_file

    (tmp_path / "a.toml").write_text('[main]\ntools = ["read_file"]\n')
    (tmp_path / "a.json").write_text('{"main": {"tools": ["read_file"]}}')
    assert (
        read_data_file(tmp_path / "a.toml") == read_data_file(tmp_path / "a.json") == {"main": {"tools": ["read_file"]}}
    )
    (tmp_path / "bad.toml").write_text("[main\n")
    cases = {tmp_path / "missing.json": "path", tmp_path / "bad.toml": "syntax", tmp_path / "a.yaml": "path"}
    for path, field in cases.items():
        with pytest.raises(DataFileError) as caught:
            read_data_file(path)
        assert caught.value.variable == str(path)
        assert caught.value.field == field
