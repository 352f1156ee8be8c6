"""Dynamic context assembly: contributors, budgets, token estimation, compaction, windows, validation, traces.

Context plans for direct model calls live in :mod:`sciencediscovery.context.plans`.
"""

from .channels import BUILTIN_CHANNELS, ChannelAnchor, RunStateChannels, StateChannel
from .contributors import (
    PROTECTED_SLOTS,
    SLOT_ORDER,
    Attachment,
    ContextContributor,
    ContextContributorFactory,
    ContextScope,
    Contribution,
    ContributionRequest,
    Contributor,
    ContributorFactory,
    Diagnostic,
    SectionSlot,
    SystemSection,
    Trust,
)
from .discovery import discover_contributor_factories, discover_state_channels
from .errors import (
    BudgetExceededError,
    ContextError,
    ContextValidationError,
    ContributionError,
    DuplicateIdError,
    RegistryFrozenError,
    RequiredContributorError,
    TokenizerUnavailableError,
)

__all__ = [
    "BUILTIN_CHANNELS",
    "PROTECTED_SLOTS",
    "SLOT_ORDER",
    "Attachment",
    "BudgetExceededError",
    "ChannelAnchor",
    "ContextContributor",
    "ContextContributorFactory",
    "ContextError",
    "ContextScope",
    "ContextValidationError",
    "Contribution",
    "ContributionError",
    "ContributionRequest",
    "Contributor",
    "ContributorFactory",
    "Diagnostic",
    "DuplicateIdError",
    "RegistryFrozenError",
    "RequiredContributorError",
    "RunStateChannels",
    "SectionSlot",
    "StateChannel",
    "SystemSection",
    "TokenizerUnavailableError",
    "Trust",
    "discover_contributor_factories",
    "discover_state_channels",
]
