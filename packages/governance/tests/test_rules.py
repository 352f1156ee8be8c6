"""Rule parsing, specifier normalisation and precedence (deny, then ask, then allow, then the default)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.governance import Effect, Rule, RuleError, RuleSet
from sciencediscovery.governance.specifiers import broad_view, exact_view


@pytest.mark.parametrize(
    ("text", "tool", "pattern"),
    [
        ("read_file(data/**)", "read_file", "data/**"),
        ("read_file", "read_file", "*"),
        ("run_code(*)", "run_code", "*"),
        ("http_get(domain:NCBI.nlm.nih.gov.)", "http_get", "domain:ncbi.nlm.nih.gov"),
        ("http_get(domain:*.NIH.gov)", "http_get", "domain:*.nih.gov"),
        ("*(data/x)", "*", "data/x"),
        ("  read_file( data//raw/./x.csv/ )  ", "read_file", "data/raw/x.csv"),
    ],
)
def test_rules_parse_into_normalised_patterns(text: str, tool: str, pattern: str) -> None:
    rule = Rule.parse(Effect.ALLOW, text)
    assert (rule.tool, rule.pattern) == (tool, pattern)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("read_file(", "expected tool_name"),
        ("read file(x)", "expected tool_name"),
        ("read_file()", "empty"),
        ("read_file(a(b))", "parentheses"),
        ("read_file(data/**x)", "'**' must be a whole path segment"),
        ("read_file(../../etc)", "climbs above its root"),
        ("read_file(data/a/../b)", "'..' segment"),
        ("http_get(domain:bad host)", "not a valid host name"),
        ("http_get(domain:)", "empty host"),
    ],
)
def test_malformed_allow_rules_are_typed_errors_naming_the_rule(text: str, problem: str) -> None:
    with pytest.raises(RuleError) as raised:
        Rule.parse("allow", text, source="permissions.toml")
    assert raised.value.rule == text
    assert problem in str(raised.value)
    assert "permissions.toml" in str(raised.value)


def test_unknown_effect_is_an_error() -> None:
    with pytest.raises(RuleError, match="effect 'permit'"):
        Rule.parse("permit", "read_file(x)")


@pytest.mark.parametrize(
    ("specifier", "exact", "broad"),
    [
        ("data/raw.csv", "data/raw.csv", "data/raw.csv"),
        ("data//raw/./x/", "data/raw/x", "data/raw/x"),
        ("data/a/../b", None, "data/b"),  # any '..' segment: nothing can allow it
        ("../data/secret", None, "data/secret"),
        ("Data/Secret", "Data/Secret", "data/secret"),
        ("\uff44ata/secret", "\uff44ata/secret", "data/secret"),
        ("data/se\u200bcret", None, "data/secret"),
        ("data\\secret", "data\\secret", "data/secret"),
        ("data/secret./x ", "data/secret./x ", "data/secret/x"),
        ("domain:NCBI.nlm.nih.gov.", "domain:ncbi.nlm.nih.gov", "domain:ncbi.nlm.nih.gov"),
        ("*", "*", "*"),
    ],
)
def test_specifier_views(specifier: str, exact: str | None, broad: str) -> None:
    assert exact_view(specifier) == exact
    assert broad_view(specifier) == broad


@pytest.mark.parametrize(
    ("pattern", "specifier", "matched"),
    [
        ("data/**", "data", True),
        ("data/**", "data/a/b.csv", True),
        ("data/**", "database/x", False),
        ("data/*.csv", "data/x.csv", True),
        ("data/*.csv", "data/sub/x.csv", False),
        ("data/?.csv", "data/1.csv", True),
        ("**/secret", "a/b/secret", True),
        ("**/secret", "notsecret", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("data/x.csv", "data/x_csv", False),
        ("*", "anything/at/all", True),
        ("**", "domain:example.org", True),
    ],
)
def test_glob_semantics(pattern: str, specifier: str, matched: bool) -> None:
    rules = RuleSet.from_lists(allow=[f"read_file({pattern})"], default="deny")
    assert (rules.evaluate("read_file", specifier).effect is Effect.ALLOW) is matched


def test_deny_beats_ask_beats_allow_whatever_the_specificity() -> None:
    rules = RuleSet.from_lists(
        allow=["read_file(data/secret/key.txt)"], ask=["read_file(data/secret/**)"], deny=["read_file(*)"]
    )
    assert rules.evaluate("read_file", "data/secret/key.txt").effect is Effect.DENY
    rules = RuleSet.from_lists(allow=["read_file(data/secret/key.txt)"], ask=["read_file(**)"])
    assert rules.evaluate("read_file", "data/secret/key.txt").effect is Effect.ASK
    assert rules.evaluate("list_files", "data").effect is Effect.ASK  # the default
    assert RuleSet(default="deny").evaluate("x", "*").source == "default:deny"


TOOLS = ["read_file", "write_file", "*"]
PATTERNS = ["*", "data/**", "data/secret/**", "data/*.csv", "**/key.txt", "DATA/Secret/**", "out/**", "data/raw.csv"]
SPECIFIERS = ["data/raw.csv", "data/secret/key.txt", "Data/SECRET/key.txt", "out/x", "data/../data/secret/k", "z"]
RULE = st.tuples(st.sampled_from(list(Effect)), st.sampled_from(TOOLS), st.sampled_from(PATTERNS))


@settings(max_examples=300, deadline=None)
@given(
    rules=st.lists(RULE, max_size=8),
    default=st.sampled_from(list(Effect)),
    tool=st.sampled_from(["read_file", "write_file"]),
    specifier=st.sampled_from(SPECIFIERS),
    data=st.data(),
)
def test_precedence_holds_for_any_rule_order(
    rules: list[tuple[Effect, str, str]], default: Effect, tool: str, specifier: str, data: st.DataObject
) -> None:
    parsed = [Rule.parse(effect, f"{name}({pattern})") for effect, name, pattern in rules]
    exact, broad = exact_view(specifier), broad_view(specifier)
    matching = {rule.effect for rule in parsed if rule.matches(tool, exact, broad)}
    expected = next((effect for effect in (Effect.DENY, Effect.ASK, Effect.ALLOW) if effect in matching), default)
    for order in (parsed, data.draw(st.permutations(parsed))):
        assert RuleSet(rules=order, default=default).evaluate(tool, specifier).effect is expected


@settings(max_examples=200, deadline=None)
@given(
    others=st.lists(RULE, max_size=6),
    specifier=st.sampled_from(SPECIFIERS),
    data=st.data(),
)
def test_a_matching_deny_always_wins(
    others: list[tuple[Effect, str, str]], specifier: str, data: st.DataObject
) -> None:
    parsed = [Rule.parse(effect, f"{name}({pattern})") for effect, name, pattern in others]
    parsed.append(Rule.parse(Effect.DENY, f"read_file({specifier})"))
    order = data.draw(st.permutations(parsed))
    assert RuleSet(rules=order, default="allow").evaluate("read_file", specifier).effect is Effect.DENY


URL_ALLOW = "http_get(http://127.0.0.1:8000/**)"


@pytest.mark.parametrize(
    "specifier",
    [
        "http://127.0.0.2:9000/../127.0.0.1:8000/x",  # the review's case: fetched from 127.0.0.2
        "http://127.0.0.2:9000/a/../../127.0.0.1:8000/x",
        "http://127.0.0.1:8000/..",
        "http://127.0.0.1:8000/x/../y",
        "http://127.0.0.2:9000/..\\../127.0.0.1:8000/x",
        "http://127.0.0.2:9000/%2e%2e/127.0.0.1:8000/x",
        "http://127.0.0.2:9000/.%2E/127.0.0.1:8000/x",
    ],
)
def test_a_dot_dot_segment_is_never_allowed(specifier: str) -> None:
    assert exact_view(specifier) is None
    rules = RuleSet.from_lists(allow=[URL_ALLOW, "http_get(**)"], default="deny")
    verdict = rules.evaluate("http_get", specifier)
    assert (verdict.effect, verdict.rule) == (Effect.DENY, None)  # the default, not an allow rule


@pytest.mark.parametrize("specifier", ["http://127.0.0.1:8000/x", "http://127.0.0.1:8000/a/.../b", "data/..x/y"])
def test_names_that_only_contain_dots_are_still_allowed(specifier: str) -> None:
    rules = RuleSet.from_lists(allow=[URL_ALLOW, "http_get(data/**)"], default="deny")
    assert rules.evaluate("http_get", specifier).effect is Effect.ALLOW
