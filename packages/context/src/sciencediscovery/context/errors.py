"""Typed errors of context assembly; each names what is at fault."""

from __future__ import annotations

from sciencediscovery.runtime_core import FrozenRegistryError, RuntimeCoreError


class ContextError(RuntimeCoreError):
    """Base class of every error raised by the context package."""


class DuplicateIdError(ContextError, ValueError):
    """Two factories, contributors, sections, attachments or channels share one id."""


class RegistryFrozenError(ContextError, FrozenRegistryError):
    """A contributor factory was registered after the run-scoped registry was frozen."""


class ContributionError(ContextError, ValueError):
    """A contributor returned something the contributor model forbids (e.g. a forged tool call)."""


class RequiredContributorError(ContextError):
    """A required contributor failed; assembly stops before the provider call."""

    def __init__(self, contributor_id: str, detail: str) -> None:
        self.contributor_id = contributor_id
        super().__init__(f"required context contributor {contributor_id!r} failed: {detail}")


class BudgetExceededError(ContextError):
    """The input cannot fit the effective limit without weakening authority or the minimal window."""


class ContextValidationError(ContextError):
    """The assembled model input broke a ContextValidator rule; ``problems`` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("context validation failed: " + "; ".join(problems))


class TokenizerUnavailableError(ContextError):
    """An exact tokenizer's encoding could not be loaded (offline and not cached)."""
