"""Host names as permission rules and network policies read them.

One normalisation for every ``domain:<host>`` specifier and every network check
(governance, web access, artifact downloads), so a host cannot be spelled one
way for a rule and another way for the request.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
_NUMERIC_V4 = re.compile(r"^[0-9a-fx.]+$")


class InvalidHostError(ValueError):
    """A host that cannot name anything (empty labels, forbidden characters, over-long labels)."""


def parse_address(text: str) -> IPAddress | None:
    """``text`` as an IP address, accepting the legacy IPv4 spellings resolvers accept (``127.1``, ``0x7f.0.0.1``)."""
    try:
        return ipaddress.ip_address(text.split("%", 1)[0] if ":" in text else text)
    except ValueError:
        pass
    lowered = text.lower().rstrip(".")
    if lowered and _NUMERIC_V4.match(lowered) and lowered[0].isdigit():
        try:
            return ipaddress.IPv4Address(socket.inet_aton(lowered))
        except OSError:
            return None
    return None


def normalize_host(host: str) -> str:
    """The canonical form of ``host``: an IP address in standard notation or a lower-case ASCII (punycode)
    name without trailing dot. Raises :class:`InvalidHostError` for a host that cannot name anything."""
    text = unicodedata.normalize("NFKC", host).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    address = parse_address(text)
    if address is not None:
        return str(address)
    text = text.lower().rstrip(".")
    if not text:
        raise InvalidHostError("empty host")
    try:
        ascii_host = text.encode("idna").decode("ascii").lower()
    except UnicodeError as error:
        raise InvalidHostError(f"not a valid host name ({error})") from None
    if len(ascii_host) > 253 or not all(_LABEL.match(label) for label in ascii_host.split(".")):
        raise InvalidHostError("not a valid host name")
    address = parse_address(ascii_host)
    return str(address) if address is not None else ascii_host
