"""Loading rules from data, JSON, TOML and the environment; malformed rules stop startup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciencediscovery.governance import Effect, PermissionConfigError, RuleError, rules_from_data, rules_from_file
from sciencediscovery.governance.config import rules_from_environment, timeout_from_environment
from sciencediscovery.runtime_core import ConfigurationError

DATA = {"default": "deny", "allow": ["read_file(data/**)"], "ask": ["run_code"], "deny": ["read_file(data/secret/**)"]}


def test_rules_from_toml_and_json_files(tmp_path: Path) -> None:
    toml = tmp_path / "permissions.toml"
    toml.write_text(
        '[permissions]\ndefault = "deny"\nallow = ["read_file(data/**)"]\nask = ["run_code"]\n'
        'deny = ["read_file(data/secret/**)"]\n'
    )
    as_json = tmp_path / "permissions.json"
    as_json.write_text(json.dumps(DATA))
    for file in (toml, as_json):
        rules = rules_from_file(file)
        assert rules.describe() == {
            "default": "deny",
            "allow": ["read_file(data/**)"],
            "ask": ["run_code"],
            "deny": ["read_file(data/secret/**)"],
        }
        assert rules.evaluate("read_file", "data/secret/k").effect is Effect.DENY


def test_a_malformed_rule_in_a_file_is_an_error_naming_rule_and_file(tmp_path: Path) -> None:
    file = tmp_path / "permissions.json"
    file.write_text(json.dumps({"allow": ["read_file(data/**)", "read_file(data/**x)", "write_file(out/**)"]}))
    with pytest.raises(RuleError) as raised:
        rules_from_file(file)
    assert raised.value.rule == "read_file(data/**x)"
    assert str(file) in str(raised.value)


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"alow": ["x"]}, "config: alow"),
        ({"allow": "read_file(x)"}, "config: allow"),
        ({"default": "maybe"}, "config: default"),
        (["read_file"], "config"),
    ],
)
def test_malformed_config_is_a_typed_error_naming_the_key(data: object, where: str) -> None:
    with pytest.raises(PermissionConfigError) as raised:
        rules_from_data(data)  # type: ignore[arg-type]
    assert raised.value.where == where


def test_a_non_string_rule_is_an_error() -> None:
    with pytest.raises(RuleError, match="must be a string"):
        rules_from_data({"deny": [42]})


@pytest.mark.parametrize(("name", "content"), [("p.toml", "allow = [1"), ("p.json", "{"), ("p.yaml", "allow: []")])
def test_unreadable_files_name_the_file(tmp_path: Path, name: str, content: str) -> None:
    file = tmp_path / name
    file.write_text(content)
    with pytest.raises(PermissionConfigError) as raised:
        rules_from_file(file)
    assert raised.value.where == str(file)
    with pytest.raises(PermissionConfigError, match="cannot read the file"):
        rules_from_file(tmp_path / "missing.json")


def test_rules_from_environment(tmp_path: Path) -> None:
    file = tmp_path / "p.json"
    file.write_text(json.dumps({"allow": ["read_file(data/**)"], "default": "allow"}))
    rules = rules_from_environment(
        {
            "SCIENCE_AGENT_PERMISSIONS_FILE": str(file),
            "SCIENCE_AGENT_PERMISSION_DENY": "read_file(data/secret/**); write_file(*)",
            "SCIENCE_AGENT_PERMISSION_ASK": '["run_code(*)"]',
            "SCIENCE_AGENT_PERMISSION_DEFAULT": "deny",
        }
    )
    assert rules.describe() == {
        "default": "deny",
        "allow": ["read_file(data/**)"],
        "ask": ["run_code(*)"],
        "deny": ["read_file(data/secret/**)", "write_file(*)"],
    }
    assert rules_from_environment({}).default is Effect.ASK


def test_environment_errors_name_the_variable_or_rule() -> None:
    with pytest.raises(RuleError, match="from environment"):
        rules_from_environment({"SCIENCE_AGENT_PERMISSION_ALLOW": "read_file(a/**b)"})
    with pytest.raises(PermissionConfigError, match="SCIENCE_AGENT_PERMISSION_ASK"):
        rules_from_environment({"SCIENCE_AGENT_PERMISSION_ASK": "[not json"})
    with pytest.raises(ConfigurationError, match="SCIENCE_AGENT_PERMISSION_DEFAULT"):
        rules_from_environment({"SCIENCE_AGENT_PERMISSION_DEFAULT": "sometimes"})
    with pytest.raises(ConfigurationError, match="SCIENCE_AGENT_PERMISSION_TIMEOUT_S"):
        timeout_from_environment({"SCIENCE_AGENT_PERMISSION_TIMEOUT_S": "-1"})
    assert timeout_from_environment({"SCIENCE_AGENT_PERMISSION_TIMEOUT_S": "30"}) == 30
