"""Dynamic context assembly: contributors, budgets, token estimation, compaction, windows, validation, traces.

Context plans for direct model calls live in :mod:`sciencediscovery.context.plans`.
"""

from .assemblers import (
    Candidate,
    DefaultContextAssembler,
    DynamicContextAssembler,
    PromptProvider,
    ShadowContextAssembler,
    ToolsProvider,
    build_context_assembler,
    plan_progress,
)
from .channels import BUILTIN_CHANNELS, ChannelAnchor, RunStateChannels, StateChannel
from .checkpoint import (
    CHECKPOINT_SECTIONS,
    SUMMARY_PURPOSE,
    CheckpointReport,
    DeterministicSummarizer,
    ModelSummarizer,
    Summarizer,
    SummaryRequest,
    checkpoint_sections,
    normalize_checkpoint,
)
from .compaction import CompactionReport, CompactionResult, HistoryCompactor, compact_message_count
from .composer import DefaultContextMessageComposer
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
from .estimators import ConservativeTokenEstimator, TokenEstimator, TokenLedger
from .projection import RuntimeStateContributor, attachment_message, runtime_data_message
from .registry import Collection, ContextContributorRegistry, ContributorRecord
from .render import Admitted, DeterministicSystemPromptRenderer, apply_context_budget
from .settings import ContextBudget, ContextSettings
from .state_store import RunStateStore
from .tiktoken_estimator import TiktokenEstimator
from .trace import SCHEMA_VERSION, TraceWriter
from .validator import ContextValidator
from .window import AtomicHistoryWindowPolicy, HistoryWindow

__all__ = [
    "BUILTIN_CHANNELS",
    "CHECKPOINT_SECTIONS",
    "PROTECTED_SLOTS",
    "SCHEMA_VERSION",
    "SLOT_ORDER",
    "SUMMARY_PURPOSE",
    "Admitted",
    "AtomicHistoryWindowPolicy",
    "Attachment",
    "BudgetExceededError",
    "Candidate",
    "ChannelAnchor",
    "CheckpointReport",
    "Collection",
    "CompactionReport",
    "CompactionResult",
    "ConservativeTokenEstimator",
    "ContextBudget",
    "ContextContributor",
    "ContextContributorFactory",
    "ContextContributorRegistry",
    "ContextError",
    "ContextScope",
    "ContextSettings",
    "ContextValidationError",
    "ContextValidator",
    "Contribution",
    "ContributionError",
    "ContributionRequest",
    "Contributor",
    "ContributorFactory",
    "ContributorRecord",
    "DefaultContextAssembler",
    "DefaultContextMessageComposer",
    "DeterministicSummarizer",
    "DeterministicSystemPromptRenderer",
    "Diagnostic",
    "DuplicateIdError",
    "DynamicContextAssembler",
    "HistoryCompactor",
    "HistoryWindow",
    "ModelSummarizer",
    "PromptProvider",
    "RegistryFrozenError",
    "RequiredContributorError",
    "RunStateChannels",
    "RunStateStore",
    "RuntimeStateContributor",
    "SectionSlot",
    "ShadowContextAssembler",
    "StateChannel",
    "Summarizer",
    "SummaryRequest",
    "SystemSection",
    "TiktokenEstimator",
    "TokenEstimator",
    "TokenLedger",
    "TokenizerUnavailableError",
    "ToolsProvider",
    "TraceWriter",
    "Trust",
    "apply_context_budget",
    "attachment_message",
    "build_context_assembler",
    "checkpoint_sections",
    "compact_message_count",
    "discover_contributor_factories",
    "discover_state_channels",
    "normalize_checkpoint",
    "plan_progress",
    "runtime_data_message",
]
