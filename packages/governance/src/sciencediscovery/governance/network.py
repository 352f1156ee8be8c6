"""Network policy: which hosts and addresses a run may reach.

Domain rules are exact hosts (``ncbi.nlm.nih.gov``) or suffix rules
(``*.nih.gov``: every subdomain of ``nih.gov``, not ``nih.gov`` itself). Deny
rules beat allow rules; an unmatched host follows ``default``. Independently
of domain rules, any address that is not globally routable (private, loopback,
link-local, unspecified, shared, reserved, multicast, including IPv4-mapped
IPv6 forms, and ``localhost`` names) is refused unless it lies in
``allowed_networks``.

Hosts are normalised before matching exactly as a client would resolve them:
Unicode NFKC, IDNA (punycode), lower case, trailing dot removed, and numeric
IPv4 spellings (``2130706433``, ``0x7f.1``, ``127.1``) read as addresses.
A fetcher calls :meth:`NetworkPolicy.check_url` for the first URL and for
every redirect target, and :meth:`NetworkPolicy.check_address` for every
address the host resolved to (so DNS cannot rebind a public name to a private
address).
"""

from __future__ import annotations

import enum
import ipaddress
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from sciencediscovery.tools.hosts import IPAddress, normalize_host, parse_address

from .errors import NetworkPolicyError

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_AMBIGUOUS = re.compile(r"[\\\s\x00-\x1f\x7f]")


class NetworkDefault(enum.StrEnum):
    """What happens to a public host that no domain rule matches."""

    ALLOW = "allow"
    DENY = "deny"


@attrs.frozen
class NetworkDecision:
    """The verdict on one URL, host or address; ``reason`` says which rule or check decided."""

    allowed: bool
    reason: str


def _unwrap(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return mapped
        if address.teredo is not None:
            return address.teredo[1]
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _domain_pattern(field: str, pattern: str) -> str:
    if not isinstance(pattern, str) or not pattern.strip():
        raise NetworkPolicyError(field, str(pattern), "must be a host name, an IP address or '*.suffix'")
    text = pattern.strip()
    wildcard = text.startswith("*.")
    body = text[2:] if wildcard else text
    if "*" in body or "/" in body or (":" in body.strip("[]") and parse_address(body.strip("[]")) is None):
        raise NetworkPolicyError(field, pattern, "only a leading '*.' wildcard is supported")
    try:
        host = normalize_host(body)
    except ValueError as error:
        raise NetworkPolicyError(field, pattern, str(error)) from None
    if wildcard and parse_address(host) is not None:
        raise NetworkPolicyError(field, pattern, "a '*.' rule needs a domain suffix, not an address")
    return f"*.{host}" if wildcard else host


def _domains(field: str, values: Iterable[str]) -> tuple[str, ...]:
    if isinstance(values, str):
        values = [values]
    return tuple(_domain_pattern(field, value) for value in values)


def _allow_domains(values: Iterable[str]) -> tuple[str, ...]:
    return _domains("allow", values)


def _deny_domains(values: Iterable[str]) -> tuple[str, ...]:
    return _domains("deny", values)


def _networks(values: Iterable[str | IPNetwork]) -> tuple[IPNetwork, ...]:
    if isinstance(values, str):
        values = [values]
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value, strict=False))
        except (TypeError, ValueError) as error:
            raise NetworkPolicyError("allowed_networks", str(value), f"not a CIDR network ({error})") from None
    return tuple(networks)


def _default(value: str | NetworkDefault) -> NetworkDefault:
    try:
        return NetworkDefault(value)
    except ValueError:
        raise NetworkPolicyError("default", str(value), "must be 'allow' or 'deny'") from None


def _schemes(values: Iterable[str]) -> tuple[str, ...]:
    if isinstance(values, str) or not all(isinstance(value, str) and value for value in values):
        raise NetworkPolicyError("schemes", str(values), "must be a list of URL schemes")
    return tuple(value.lower() for value in values)


def _matches(pattern: str, host: str) -> bool:
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


@attrs.frozen
class NetworkPolicy:
    """Which hosts and addresses a run may reach. Every field is validated and normalised at construction."""

    allow: tuple[str, ...] = attrs.field(default=(), converter=_allow_domains)
    deny: tuple[str, ...] = attrs.field(default=(), converter=_deny_domains)
    allowed_networks: tuple[IPNetwork, ...] = attrs.field(default=(), converter=_networks)
    default: NetworkDefault = attrs.field(default=NetworkDefault.ALLOW, converter=_default)
    schemes: tuple[str, ...] = attrs.field(default=("http", "https"), converter=_schemes)

    @classmethod
    def deny_all(cls) -> NetworkPolicy:
        """A policy that refuses every host (offline runs)."""
        return cls(default=NetworkDefault.DENY)

    @classmethod
    def from_config(cls, data: Mapping[str, Any]) -> NetworkPolicy:
        """Build from plain config data (keys ``allow``, ``deny``, ``allowed_networks``, ``default``, ``schemes``)."""
        unknown = sorted(set(data) - {"allow", "deny", "allowed_networks", "default", "schemes"})
        if unknown:
            raise NetworkPolicyError("key", unknown[0], "unknown network policy key")
        return cls(
            allow=data.get("allow", ()),
            deny=data.get("deny", ()),
            allowed_networks=data.get("allowed_networks", ()),
            default=data.get("default", NetworkDefault.ALLOW),
            schemes=data.get("schemes", ("http", "https")),
        )

    def check_url(self, url: str) -> NetworkDecision:
        """Check a URL's scheme and host; call again for every redirect target.

        URLs holding a backslash, whitespace or control characters are refused: parsers
        disagree about where their host ends.
        """
        if _AMBIGUOUS.search(url):
            return NetworkDecision(False, "URL contains a backslash, whitespace or control character")
        try:
            parts = urllib.parse.urlsplit(url)
            host = parts.hostname
            parts.port  # noqa: B018  (raises ValueError on a malformed port)
        except ValueError as error:
            return NetworkDecision(False, f"malformed URL: {error}")
        if parts.scheme.lower() not in self.schemes:
            allowed = ", ".join(self.schemes)
            return NetworkDecision(False, f"scheme {parts.scheme!r} is not allowed (allowed: {allowed})")
        if not host:
            return NetworkDecision(False, "URL has no host")
        return self.check_host(host)

    def check_host(self, host: str) -> NetworkDecision:
        """Check a host name or IP literal against the domain rules and, for a literal, the address rules."""
        try:
            canonical = normalize_host(host)
        except ValueError as error:
            return NetworkDecision(False, f"invalid host {host!r}: {error}")
        address = parse_address(canonical)
        if canonical == "localhost" or canonical.endswith(".localhost"):
            address = ipaddress.IPv4Address("127.0.0.1")  # RFC 6761: always loopback
        if address is not None:
            verdict = self.check_address(address)
            if not verdict.allowed:
                return verdict
        for pattern in self.deny:
            if _matches(pattern, canonical):
                return NetworkDecision(False, f"host {canonical} matches deny rule {pattern}")
        for pattern in self.allow:
            if _matches(pattern, canonical):
                return NetworkDecision(True, f"host {canonical} matches allow rule {pattern}")
        if self.default is NetworkDefault.ALLOW:
            return NetworkDecision(True, f"host {canonical} matches no rule; default allow")
        return NetworkDecision(False, f"host {canonical} matches no allow rule; default deny")

    def check_address(self, address: str | IPAddress) -> NetworkDecision:
        """Check one resolved address: non-global addresses need an ``allowed_networks`` entry."""
        parsed = address if not isinstance(address, str) else parse_address(address.strip("[]"))
        if parsed is None:
            return NetworkDecision(False, f"not an IP address: {address!r}")
        effective = _unwrap(parsed)
        for network in self.allowed_networks:
            if parsed in network or effective in network:
                return NetworkDecision(True, f"address {parsed} is in allowed network {network}")
        if not effective.is_global or effective.is_multicast:
            return NetworkDecision(False, f"address {parsed} is not public (private, loopback, link-local or reserved)")
        return NetworkDecision(True, f"address {parsed} is public")

    def describe(self) -> dict[str, Any]:
        """Plain data for context sections and audit records."""
        return {
            "allow": list(self.allow),
            "deny": list(self.deny),
            "allowed_networks": [str(network) for network in self.allowed_networks],
            "default": self.default.value,
            "schemes": list(self.schemes),
        }
