"""ContextValidator: the last check before a model input leaves the assembler."""

from __future__ import annotations

from collections.abc import Collection

from sciencediscovery.runtime_core import HistoryError, ModelInput, check_pairing

from .contributors import SystemSection
from .errors import ContextValidationError
from .estimators import TokenLedger


class ContextValidator:
    """Rejects an input that drops a protected section, exposes an ungoverned tool,
    carries an orphan or split tool result, or exceeds the effective limit."""

    def validate(
        self,
        model_input: ModelInput,
        *,
        protected: Collection[SystemSection],
        governed_tools: Collection[str],
        limit: int,
        ledger: TokenLedger,
    ) -> int:
        """Return the estimated input tokens, or raise :class:`ContextValidationError` listing every problem."""
        problems: list[str] = []
        for section in protected:
            if section.content.strip() not in model_input.system_prompt:
                problems.append(f"protected section {section.id!r} is missing or altered in the system prompt")
        ungoverned = sorted({tool.name for tool in model_input.tools} - set(governed_tools))
        if ungoverned:
            problems.append(f"tools not in the governed tool set: {', '.join(ungoverned)}")
        try:
            check_pairing(model_input.messages, allow_open=True)
        except HistoryError as error:
            problems.append(f"history pairing: {error}")
        tokens = estimate_input(model_input, ledger)
        if tokens > limit:
            problems.append(f"estimated input of {tokens} tokens exceeds the effective limit of {limit}")
        if problems:
            raise ContextValidationError(problems)
        return tokens


def estimate_input(model_input: ModelInput, ledger: TokenLedger) -> int:
    """Estimated tokens of a whole model input: prompt, tool schemas and messages."""
    return (
        ledger.text(model_input.system_prompt) + ledger.tools(model_input.tools) + ledger.messages(model_input.messages)
    )
