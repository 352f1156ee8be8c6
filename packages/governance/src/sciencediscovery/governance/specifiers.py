"""Specifier normalisation and glob matching, built so that a deny cannot be dodged.

A specifier is the string a tool derives from its arguments (a mount-relative
path such as ``data/raw.csv``, ``domain:ncbi.nlm.nih.gov``, or ``*``). Each is
seen through two views:

* the **exact** view (allow rules and grants): Unicode NFC, ``.`` segments and
  duplicate or trailing slashes removed. A specifier with a ``..`` segment
  (between ``/`` or ``\\``, also spelled ``%2e%2e``, ``.%2e`` or ``%2e.``) has no
  exact view, so nothing can allow it: resolving it lexically would let a URL
  such as ``http://a/../b/x`` (fetched from host ``a``) meet an allow rule for
  ``http://b/**``. Workspace tools pass already resolved paths, which hold no ``..``.
* the **broad** view (deny and ask rules): additionally NFKC, case-folded,
  ``\\`` read as ``/``, invisible format characters removed, trailing dots and
  spaces of segments removed, and ``..`` clamped at the root. Look-alike,
  case and separator tricks therefore still meet the deny rule, while an allow
  rule never stretches to a path it does not name exactly.

``domain:`` specifiers are normalised with :func:`~.network.normalize_host`
in both views. Patterns: ``*`` or ``**`` alone match any specifier; otherwise ``**``
as a whole segment matches any number of segments (``data/**`` matches
``data`` and everything below it), ``*`` matches within one segment and
``?`` one character; ``domain:*.suffix`` matches subdomains of ``suffix``.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from sciencediscovery.tools.hosts import normalize_host

DOMAIN_PREFIX = "domain:"


def _clean_segments(text: str, *, clamp: bool) -> str | None:
    absolute = text.startswith("/")
    parts: list[str] = []
    for segment in text.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts:
                parts.pop()
            elif not clamp:
                return None
            continue
        parts.append(segment)
    joined = "/".join(parts)
    return "/" + joined if absolute else joined


def _strip_invisible(text: str) -> str:
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cc"))


def _domain(text: str) -> str | None:
    try:
        return DOMAIN_PREFIX + normalize_host(text[len(DOMAIN_PREFIX) :])
    except ValueError:
        return None


_DOT_DOT_SEGMENT = re.compile(r"(?:^|[/\\])(?:\.|%2e){2}(?=$|[/\\])", re.IGNORECASE)


def has_dot_dot_segment(text: str) -> bool:
    """Whether ``text`` has a ``..`` segment (separated by ``/`` or ``\\``; ``%2e`` counts as a dot)."""
    return _DOT_DOT_SEGMENT.search(text) is not None


def exact_view(specifier: str) -> str | None:
    """The specifier as allow rules and grants see it, or ``None`` when it cannot be allowed."""
    text = unicodedata.normalize("NFC", specifier)
    if text == "*":
        return text
    if text.lower().startswith(DOMAIN_PREFIX):
        return _domain(text)
    if any(unicodedata.category(ch) in ("Cf", "Cc") for ch in text):
        return None
    if has_dot_dot_segment(text):
        return None
    return _clean_segments(text, clamp=False)


def lexical_view(specifier: str) -> str:
    """``..`` resolved lexically and clamped at the root (NFC, no folding): only for finding the mount a
    specifier names, to apply the epoch's limits, never for allowing."""
    return _clean_segments(unicodedata.normalize("NFC", specifier), clamp=True) or ""


def broad_view(specifier: str) -> str:
    """The specifier as deny and ask rules see it: folded so look-alikes collapse onto one form."""
    text = _strip_invisible(unicodedata.normalize("NFKC", specifier)).casefold()
    text = unicodedata.normalize("NFKC", text)
    if text.startswith(DOMAIN_PREFIX):
        return _domain(text) or text
    text = text.replace("\\", "/")
    text = "/".join(segment.rstrip(". ") if segment not in (".", "..") else segment for segment in text.split("/"))
    return _clean_segments(text, clamp=True) or ""


def normalize_pattern(pattern: str, *, broad: bool) -> str:
    """A rule's specifier pattern in the view its effect uses (raises ``ValueError`` if it cannot match)."""
    if pattern == "*":
        return pattern
    if pattern.lower().startswith(DOMAIN_PREFIX):
        host = pattern[len(DOMAIN_PREFIX) :]
        wildcard = host.startswith("*.")
        normalized = normalize_host(host[2:] if wildcard else host)
        return DOMAIN_PREFIX + ("*." if wildcard else "") + normalized
    view = broad_view(pattern) if broad else exact_view(pattern)
    if view is None:
        raise ValueError("the pattern climbs above its root or has a '..' segment, or holds invisible characters")
    for segment in view.split("/"):
        if "**" in segment and segment != "**":
            raise ValueError("'**' must be a whole path segment")
    return view


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    out = ""
    separate = False
    segments = pattern.split("/")
    for index, segment in enumerate(segments):
        if segment == "**":
            if index == 0:
                out += ".*" if len(segments) == 1 else "(?:.*/)?"
            else:
                out += "(?:/.*)?"
                separate = True
            continue
        piece = re.escape(segment).replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
        out += ("/" if separate else "") + piece
        separate = True
    return re.compile(out, re.DOTALL)


def matches(pattern: str, view: str | None) -> bool:
    """Whether a normalised ``pattern`` matches a specifier's normalised ``view``."""
    if view is None:
        return False
    if pattern in ("*", "**"):
        return True
    if pattern.startswith(DOMAIN_PREFIX + "*."):
        return view.startswith(DOMAIN_PREFIX) and view.endswith(pattern[len(DOMAIN_PREFIX) + 1 :])
    if pattern.startswith(DOMAIN_PREFIX) or view.startswith(DOMAIN_PREFIX):
        return pattern == view
    return _compile(pattern).fullmatch(view) is not None
