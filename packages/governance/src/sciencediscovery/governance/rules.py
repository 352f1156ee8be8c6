"""Permission rules ``tool(specifier)`` and their evaluation: deny, then ask, then allow, then the default.

Order and specificity never matter: any matching deny wins over any matching
ask, which wins over any matching allow. Deny and ask rules match the broad
view of a specifier, allow rules the exact view (see :mod:`.specifiers`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable

import attrs

from . import specifiers
from .errors import RuleError

_RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_.\-]+|\*)(?:\((?P<spec>.*)\))?$", re.DOTALL)


class Effect(enum.StrEnum):
    """What a rule (or the default) says about a matching call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@attrs.frozen
class Rule:
    """One validated rule. ``text`` is the rule as written; ``pattern`` its normalised specifier pattern."""

    effect: Effect
    text: str
    tool: str
    pattern: str

    @classmethod
    def parse(cls, effect: Effect | str, text: str, *, source: str = "") -> Rule:
        """Parse and validate ``tool(specifier)`` (or bare ``tool``, meaning ``tool(*)``)."""
        if not isinstance(text, str):
            raise RuleError(repr(text), "a rule must be a string like 'read_file(data/**)'", source=source)
        try:
            effect = Effect(effect)
        except ValueError:
            raise RuleError(text, f"effect {effect!r} must be allow, ask or deny", source=source) from None
        stripped = text.strip()
        match = _RULE.match(stripped)
        if match is None:
            raise RuleError(
                text, "expected tool_name or tool_name(specifier) with a name of letters, digits, _ . -", source=source
            )
        spec = match["spec"]
        if spec is None:
            spec = "*"
        spec = spec.strip()
        if not spec:
            raise RuleError(text, "the specifier in parentheses is empty (use '*' for any)", source=source)
        if "(" in spec or ")" in spec:
            raise RuleError(text, "the specifier must not contain parentheses", source=source)
        try:
            pattern = specifiers.normalize_pattern(spec, broad=effect is not Effect.ALLOW)
        except ValueError as error:
            raise RuleError(text, f"bad specifier {spec!r}: {error}", source=source) from None
        return cls(effect=effect, text=stripped, tool=match["tool"], pattern=pattern)

    def matches(self, tool: str, exact: str | None, broad: str) -> bool:
        """Whether this rule covers a call of ``tool`` whose specifier has these two views."""
        if self.tool not in ("*", tool):
            return False
        return specifiers.matches(self.pattern, broad if self.effect is not Effect.ALLOW else exact)


@attrs.frozen
class Verdict:
    """The policy's answer for one call; ``rule`` is ``None`` when the default decided."""

    effect: Effect
    rule: Rule | None

    @property
    def source(self) -> str:
        return f"rule:{self.effect.value}:{self.rule.text}" if self.rule else f"default:{self.effect.value}"


def _rule_tuple(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    return tuple(rules)


@attrs.frozen
class RuleSet:
    """Validated rules and the default effect for unmatched calls (``ask`` unless configured)."""

    rules: tuple[Rule, ...] = attrs.field(default=(), converter=_rule_tuple)
    default: Effect = attrs.field(default=Effect.ASK, converter=Effect)

    @classmethod
    def from_lists(
        cls,
        *,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        default: Effect | str = Effect.ASK,
        source: str = "",
    ) -> RuleSet:
        rules = [
            Rule.parse(effect, text, source=source)
            for effect, texts in ((Effect.DENY, deny), (Effect.ASK, ask), (Effect.ALLOW, allow))
            for text in texts
        ]
        return cls(rules=rules, default=default)

    def evaluate(self, tool: str, specifier: str) -> Verdict:
        """Deny, then ask, then allow, regardless of rule order; otherwise the default."""
        exact, broad = specifiers.exact_view(specifier), specifiers.broad_view(specifier)
        for effect in (Effect.DENY, Effect.ASK, Effect.ALLOW):
            rule = self._first(effect, tool, exact, broad)
            if rule is not None:
                return Verdict(effect, rule)
        return Verdict(self.default, None)

    def _first(self, effect: Effect, tool: str, exact: str | None, broad: str) -> Rule | None:
        return next((r for r in self.rules if r.effect is effect and r.matches(tool, exact, broad)), None)

    def describe(self) -> dict[str, object]:
        """Plain data: rules grouped by effect, as written, and the default."""
        return {
            "default": self.default.value,
            **{effect.value: [r.text for r in self.rules if r.effect is effect] for effect in Effect},
        }
