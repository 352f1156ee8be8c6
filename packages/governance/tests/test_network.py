"""NetworkPolicy: domain rules, non-public addresses and host normalisation (used at every redirect hop)."""

from __future__ import annotations

import pytest

from sciencediscovery.governance.errors import NetworkPolicyError
from sciencediscovery.governance.network import NetworkDefault, NetworkPolicy

POLICY = NetworkPolicy(allow=["*.nih.gov", "example.org"], deny=["evil.nih.gov"], default="deny")


@pytest.mark.parametrize(
    "url",
    [
        "https://ncbi.nlm.nih.gov/gene",
        "https://EXAMPLE.org./path",
        "http://example.org:8443/x",
        "https://\uff4e\uff43\uff42\uff49.nlm.nih.gov/",  # fullwidth letters normalise to the allowed host
    ],
)
def test_allowed_urls(url: str) -> None:
    assert POLICY.check_url(url).allowed, POLICY.check_url(url).reason


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://evil.nih.gov/", "deny rule"),
        ("https://EVIL.NIH.GOV./", "deny rule"),
        ("https://\uff45\uff56\uff49\uff4c.nih.gov/", "deny rule"),  # fullwidth
        ("https://evil\u3002nih\u3002gov/", "deny rule"),  # ideographic full stops
        ("https://nih.gov/", "default deny"),  # '*.nih.gov' covers subdomains only
        ("https://nih.gov.attacker.com/", "default deny"),
        ("https://example.org.attacker.com/", "default deny"),
        ("https://attackerexample.org/", "default deny"),
        ("ftp://example.org/", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("https:///nohost", "no host"),
        ("https://example.org:99999/", "malformed"),
        ("https://a..b/", "invalid host"),
        ("https://evil.org\\@ncbi.nlm.nih.gov/", "backslash"),
        ("https://example.org\\.evil.org/", "backslash"),
        ("https://exa mple.org/", "whitespace"),
        ("https://example.org\t.evil.org/", "control"),
    ],
)
def test_refused_urls(url: str, reason: str) -> None:
    decision = POLICY.check_url(url)
    assert not decision.allowed
    assert reason in decision.reason


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://127.1/",
        "http://2130706433/",
        "http://0x7f.0.0.1/",
        "http://0177.0.0.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:a00:1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[2002:a00:1::]/",
        "http://10.0.0.5/",
        "http://172.16.3.4/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://0.0.0.0/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://localhost/",
        "http://LOCALHOST./",
        "http://api.localhost/",
    ],
)
def test_non_public_addresses_refused_by_default(url: str) -> None:
    decision = NetworkPolicy().check_url(url)
    assert not decision.allowed
    assert "not public" in decision.reason


def test_allowed_network_admits_loopback_and_allow_rule_still_applies() -> None:
    policy = NetworkPolicy(allowed_networks=["127.0.0.0/8"], default="deny", allow=["127.0.0.1"])
    assert policy.check_url("http://127.0.0.1:8080/x").allowed
    assert not policy.check_url("http://127.0.0.2/").allowed  # network ok, but no allow rule
    assert not policy.check_url("http://10.0.0.1/").allowed


def test_resolved_addresses_are_checked_separately() -> None:
    policy = NetworkPolicy(allow=["data.example.org"], default="deny")
    assert policy.check_host("data.example.org").allowed
    assert not policy.check_address("10.1.2.3").allowed  # a public name resolving to a private address
    assert policy.check_address("93.184.216.34").allowed
    assert not policy.check_address("not-an-ip").allowed


def test_default_allow_and_deny_all() -> None:
    assert NetworkPolicy().check_url("https://example.com/").allowed
    decision = NetworkPolicy.deny_all().check_url("https://example.com/")
    assert not decision.allowed
    assert NetworkPolicy.deny_all().default is NetworkDefault.DENY


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"allow": ["ex*ample.org"]}, "allow"),
        ({"deny": ["*.10.0.0.1"]}, "deny"),
        ({"deny": [""]}, "deny"),
        ({"allow": ["bad host.org"]}, "allow"),
        ({"allowed_networks": ["10.0.0.0/33"]}, "allowed_networks"),
        ({"default": "maybe"}, "default"),
        ({"schemes": "http"}, "schemes"),
        ({"alow": ["x.org"]}, "key"),
    ],
)
def test_malformed_config_is_a_typed_error_naming_the_field(config: dict, field: str) -> None:
    with pytest.raises(NetworkPolicyError) as raised:
        NetworkPolicy.from_config(config)
    assert raised.value.field == field


def test_describe_is_plain_data() -> None:
    policy = NetworkPolicy.from_config({"allow": ["*.NIH.gov."], "allowed_networks": ["127.0.0.1"], "default": "deny"})
    assert policy.describe() == {
        "allow": ["*.nih.gov"],
        "deny": [],
        "allowed_networks": ["127.0.0.1/32"],
        "default": "deny",
        "schemes": ["http", "https"],
    }
