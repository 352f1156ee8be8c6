"""Token estimation behind one interface, with per-message memoisation.

:class:`ConservativeTokenEstimator` is the built-in default: it deliberately
overestimates mixed Chinese/English scientific text. An exact tokenizer (for
example :class:`~sciencediscovery.context.tiktoken_estimator.TiktokenEstimator`)
is injected by the provider side without changing the assembler.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from sciencediscovery.runtime_core import Message, ToolSpec

MESSAGE_OVERHEAD_TOKENS = 4
"""Per-message framing tokens (role markers and separators) added to every message."""
TOOL_OVERHEAD_TOKENS = 8
"""Per-tool framing tokens added to every tool schema."""


@runtime_checkable
class TokenEstimator(Protocol):
    """Counts the tokens of a text. ``name`` says which tokenizer is in use (it is traced)."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


_PUNCTUATION = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_DENSE = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\n\r\t"
_DIGIT_OR_OTHER = bytes(48 if 48 <= code <= 57 else 97 for code in range(256))  # b"0" for digits, b"a" else


class ConservativeTokenEstimator:
    """Overestimates on purpose, for mixed Chinese/English scientific text.

    Every text costs 1 token; ASCII punctuation, line breaks, digits and
    capitals (which tokenizers split finely in numbers, units and gene names)
    1 each, plus 1 per number (its neighbours split off); other ASCII
    characters 1 per 2.5. A non-ASCII character costs its UTF-8 length (3 for
    a CJK character), the most a byte-level BPE tokenizer can spend on it.
    Real tokenizers spend about 4 English characters per token and 1-3 tokens
    per CJK character, so ordinary text is counted high (adversarial ASCII,
    such as random letter soup, can cost more). Every pass runs at C speed.
    """

    name = "conservative"

    def count(self, text: str) -> int:
        if not text:
            return 0
        characters = len(text)
        ascii_bytes = text.encode("ascii", "ignore")
        punctuation = len(ascii_bytes) - len(ascii_bytes.translate(None, _PUNCTUATION))
        dense = len(ascii_bytes) - len(ascii_bytes.translate(None, _DENSE))
        classes = ascii_bytes.translate(_DIGIT_OR_OTHER)
        numbers = classes.count(b"a0") + classes.startswith(b"0")
        tokens = 1 + punctuation + dense + numbers + -(-(len(ascii_bytes) - punctuation - dense) * 2 // 5)
        if len(ascii_bytes) < characters:
            tokens += len(text.encode("utf-8")) - len(ascii_bytes)
        return tokens


class TokenLedger:
    """Memoised token counts of messages, texts and tool schemas for one estimator.

    Messages are immutable, so a message's count is remembered by identity;
    each turn therefore costs work proportional to the messages that are new.
    """

    def __init__(self, estimator: TokenEstimator, *, max_entries: int = 200_000) -> None:
        self.estimator = estimator
        self._messages: dict[int, tuple[Message, int]] = {}
        self._texts: dict[str, int] = {}
        self._max_entries = max_entries

    @property
    def name(self) -> str:
        return self.estimator.name

    def text(self, text: str) -> int:
        """Tokens of ``text`` (memoised for repeated texts such as prompts)."""
        cached = self._texts.get(text)
        if cached is None:
            if len(self._texts) >= self._max_entries:
                self._texts.clear()
            cached = self._texts[text] = self.estimator.count(text)
        return cached

    def message(self, message: Message) -> int:
        """Tokens of one message: content, tool calls and framing."""
        entry = self._messages.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        count = MESSAGE_OVERHEAD_TOKENS + self.estimator.count(message.content)
        for call in message.tool_calls:
            count += self.estimator.count(call.name) + self.estimator.count(
                json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
            )
        if len(self._messages) >= self._max_entries:
            self._messages.clear()
        self._messages[id(message)] = (message, count)
        return count

    def messages(self, messages: Iterable[Message]) -> int:
        return sum(self.message(message) for message in messages)

    def tools(self, tools: Iterable[ToolSpec]) -> int:
        """Tokens of tool schemas as declared to the model."""
        return sum(
            TOOL_OVERHEAD_TOKENS
            + self.text(
                f"{tool.name}\n{tool.description}\n{json.dumps(tool.parameters, ensure_ascii=False, sort_keys=True)}"
            )
            for tool in tools
        )
