"""Sanitization of untrusted tool output: hidden text stripped, authority-imitating text neutralised.

Two phases, documented exactly in docs/packages/tools.md:

1. *Hidden text is removed*: ANSI escape sequences, control characters (tab
   and newline kept; carriage returns and the line and paragraph separators
   U+2028/U+2029 become newlines), zero-width and other
   invisible format characters, bidirectional controls, Unicode tag
   characters and variation selectors. Lone surrogates become U+FFFD.
2. *Imitations are neutralised* by replacing the one delimiter that gives
   them meaning with an HTML character reference, so the text stays readable
   but can no longer open or close a tag: ``<`` (or a look-alike) before a
   reserved tag name such as ``runtime_context_data``, ``system`` or
   ``governance`` becomes ``&lt;``; the ``<`` of special tokens like
   ``<|im_start|>`` and ``<<SYS>>`` becomes ``&lt;``; the ``[`` of ``[INST]``-style tokens
   becomes ``&#91;``; the first ``#`` of a line-leading ``### System``
   header becomes ``&#35;`` and the colon of a line-leading ``System:``
   label becomes ``&#58;``.

:func:`sanitize` is idempotent: sanitizing sanitized text changes nothing.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping

import attrs


class Change(str, enum.Enum):
    """A class of change the sanitizer makes; counts per class are reported."""

    ANSI_ESCAPE = "ansi_escape"
    CONTROL = "control"
    ZERO_WIDTH = "zero_width"
    BIDI = "bidi"
    TAG_CHARACTER = "tag_character"
    VARIATION_SELECTOR = "variation_selector"
    LONE_SURROGATE = "lone_surrogate"
    WRAPPER_TAG = "wrapper_tag"
    ROLE_TOKEN = "role_token"
    ROLE_HEADER = "role_header"


@attrs.frozen
class Sanitized:
    """Sanitized text and how many changes of each class were made."""

    text: str
    changes: Mapping[str, int] = attrs.field(factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


# -- phase 1: hidden text ---------------------------------------------------

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement, erase
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC (titles, hyperlinks), terminated by BEL or ST
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]"  # other two-character escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)

_RANGES: dict[Change, str] = {
    Change.CONTROL: "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f",
    Change.ZERO_WIDTH: (
        "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2064\u206a-\u206f"
        "\u3164\ufeff\uffa0\ufff9-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    ),
    Change.BIDI: "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069",
    Change.TAG_CHARACTER: "\U000e0000-\U000e007f",
    Change.VARIATION_SELECTOR: "\ufe00-\ufe0f\U000e0100-\U000e01ef",
    Change.LONE_SURROGATE: "\ud800-\udfff",
}
_CLASSIFY = [(change, re.compile(f"[{chars}]")) for change, chars in _RANGES.items()]
# carriage returns and the Unicode line/paragraph separators end a line: they become newlines,
# so the role-line neutraliser below sees the line start a model would see
_LINE_BREAKS = "\u2028\u2029"
_HIDDEN = re.compile("\r\n?|[" + _LINE_BREAKS + "]|[" + "".join(_RANGES.values()) + "]")


def _hidden(match: re.Match[str], counts: Counter[str]) -> str:
    char = match.group()
    if char.startswith("\r") or char in _LINE_BREAKS:
        counts[Change.CONTROL.value] += 1
        return "\n"
    change = next(change for change, pattern in _CLASSIFY if pattern.match(char))
    counts[change.value] += 1
    return "\ufffd" if change is Change.LONE_SURROGATE else ""


# -- phase 2: imitations ----------------------------------------------------

_LT = "<\uff1c\ufe64\u2039\u2329\u27e8\u3008"
_GT = ">\uff1e\ufe65\u203a\u232a\u27e9\u3009"
_BAR = "|\uff5c"

RESERVED_TAGS = frozenset(
    {
        "runtimecontextdata",
        "system",
        "sys",
        "developer",
        "assistant",
        "user",
        "human",
        "tool",
        "toolcall",
        "toolcalls",
        "toolresult",
        "toolresponse",
        "functioncall",
        "functioncalls",
        "functionresult",
        "functionresults",
        "governance",
        "instruction",
        "instructions",
        "identity",
        "runcontract",
        "taskstate",
        "planstate",
        "capabilities",
        "workingcontext",
        "footer",
        "context",
        "permission",
        "permissions",
    }
)
"""Normalised tag names (NFKC, case-folded, look-alikes folded, ``_-.`` removed) that untrusted text may not open."""
RESERVED_PREFIXES = ("runtimecontext", "system", "governance")

_CONFUSABLES = str.maketrans("асеіјорѕухԁοαντκιερ", "aceijopsyxdoavtkiep")
# possessive quantifiers keep every pattern linear on long runs of whitespace
_TAG = re.compile(f"[{_LT}](?P<slash>\\s*+(?:/\\s*+)?)(?P<name>[^\\s{_LT}{_GT}/=\"'|\\uff5c&;]{{1,64}})")
_SPECIAL_TOKEN = re.compile(f"[{_LT}][{_BAR}][^\\s{_BAR}{_LT}{_GT}]{{1,64}}[{_BAR}]\\s*+[{_GT}]")
_DOUBLE_ANGLE = re.compile(r"<<\s*+(?:/\s*+)?SYS\s*+>>", re.IGNORECASE)
_BRACKET_TOKEN = re.compile(
    r"\[\s*+(?:/\s*+)?(?:INST|SYS|SYSTEM|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\s*+\]", re.IGNORECASE
)
_ROLES = r"system|assistant|user|human|developer|instructions?|governance"
# indentation is any whitespace except the newline (NBSP and ideographic space too) and quote markers
_HASH_HEADER = re.compile(
    rf"^(?P<indent>(?:[^\S\n]|>)*+)#(?=#{{0,5}}[^\S\n]*+(?:{_ROLES})\b)", re.IGNORECASE | re.MULTILINE
)
_LABEL = re.compile(
    r"^(?P<head>(?:[^\S\n]|>)*+(?:system|assistant|human|developer)[^\S\n]*+)[:\uff1a]",
    re.IGNORECASE | re.MULTILINE,
)


def _normalise_tag(name: str) -> str:
    folded = unicodedata.normalize("NFKC", name).casefold().translate(_CONFUSABLES)
    return re.sub(r"[_\-.\s]", "", folded)


def is_reserved_tag(name: str) -> bool:
    """Whether a tag name imitates one of our wrappers, sections or a role (namespaces like ``x:system`` too)."""
    candidates = {_normalise_tag(name), _normalise_tag(name.rsplit(":", 1)[-1])}
    return any(c in RESERVED_TAGS or c.startswith(RESERVED_PREFIXES) for c in candidates)


def _tag(match: re.Match[str], counts: Counter[str]) -> str:
    if not is_reserved_tag(match.group("name")):
        return match.group()
    counts[Change.WRAPPER_TAG.value] += 1
    return "&lt;" + match.group("slash") + match.group("name")


def _counted(
    change: Change, replace: Callable[[re.Match[str]], str], counts: Counter[str]
) -> Callable[[re.Match[str]], str]:
    def substitute(match: re.Match[str]) -> str:
        counts[change.value] += 1
        return replace(match)

    return substitute


def sanitize(text: str) -> Sanitized:
    """Remove hidden text and neutralise imitations of our wrappers and role markup (idempotent)."""
    counts: Counter[str] = Counter()
    text = _ANSI.sub(_counted(Change.ANSI_ESCAPE, lambda m: "", counts), text)
    text = _HIDDEN.sub(lambda m: _hidden(m, counts), text)
    text = _SPECIAL_TOKEN.sub(_counted(Change.ROLE_TOKEN, lambda m: "&lt;" + m.group()[1:], counts), text)
    text = _DOUBLE_ANGLE.sub(_counted(Change.ROLE_TOKEN, lambda m: "&lt;&lt;" + m.group()[2:], counts), text)
    text = _BRACKET_TOKEN.sub(_counted(Change.ROLE_TOKEN, lambda m: "&#91;" + m.group()[1:], counts), text)
    text = _TAG.sub(lambda m: _tag(m, counts), text)
    text = _HASH_HEADER.sub(_counted(Change.ROLE_HEADER, lambda m: m.group("indent") + "&#35;", counts), text)
    text = _LABEL.sub(_counted(Change.ROLE_HEADER, lambda m: m.group("head") + "&#58;", counts), text)
    return Sanitized(text, dict(sorted(counts.items())))


def cap_text(text: str, max_chars: int, notice: str) -> str:
    """Cap ``text`` to ``max_chars`` characters (or the notice's length if longer): head, notice line, tail."""
    if len(text) <= max_chars:
        return text
    marker = f"\n[... {notice} ...]\n"
    room = max(0, max_chars - len(marker))
    head = room * 2 // 3
    tail = room - head
    return text[:head] + marker + text[len(text) - tail :] if tail else text[:head] + marker
