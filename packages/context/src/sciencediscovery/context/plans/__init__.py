"""Context plans and processing policies for direct model calls.

A :class:`ContextPlan` of :class:`ContextFragment` values is assembled into the real provider
request (runtime_core's ``ModelInput``), measured and either sent or rejected with
:class:`PlanOverLimitError`; nothing is reduced unless a :class:`ContextPolicy` says so.
:class:`ContextProcessor` offers the three stages (``select``, ``reduce``, ``process``) against a
:class:`ContextRun`, which owns the quota, deadline, cancellation and the final guarded call.
See ``docs/context-plans.md``.
"""

from .errors import (
    ContextPlanError,
    HandlerCallLimitError,
    PlanDefinitionError,
    PlanOverLimitError,
    PreparedHandleError,
    PreservedTailTooLargeError,
    ProcessingCancelledError,
    ProtectedFragmentError,
    QuotaExhaustedError,
    ReductionError,
    SelectorError,
    StepUnavailableError,
)
from .events import (
    ContextStageCompleted,
    ContextStageDuration,
    ContextStageEvent,
    ContextStageFailed,
    ContextStageStarted,
    ContextStageTransition,
    FragmentChange,
    ProcessingReport,
)
from .fragments import ContextFragment, ContextPlan, FragmentRole, Lifetime, Trust, json_chars
from .handlers import CompressionJob, Compressor, HandlerContext, SelectionJob, Selector, StepCandidate
from .policy import (
    AutoSelection,
    CompressStep,
    ContextPolicy,
    FixedSelection,
    ModelSelection,
    Preserve,
    SequenceSelection,
    TrimStep,
)
from .prepared import PreparedHandle
from .quota import ModelCallQuota
from .request import RESPONSE_SCHEMA_KEY, ContextRequest, Measurement, TokenBudget, TokenCounter, assemble, measure
from .run import ContextRun
from .signals import CancelSignal
from .stages import ContextProcessor, ProcessingResult, SelectionResult, StageResult
from .strategies import ContextStrategy, create_context_strategy

__all__ = [
    "RESPONSE_SCHEMA_KEY",
    "AutoSelection",
    "CancelSignal",
    "CompressStep",
    "CompressionJob",
    "Compressor",
    "ContextFragment",
    "ContextPlan",
    "ContextPlanError",
    "ContextPolicy",
    "ContextProcessor",
    "ContextRequest",
    "ContextRun",
    "ContextStageCompleted",
    "ContextStageDuration",
    "ContextStageEvent",
    "ContextStageFailed",
    "ContextStageStarted",
    "ContextStageTransition",
    "ContextStrategy",
    "FixedSelection",
    "FragmentChange",
    "FragmentRole",
    "HandlerCallLimitError",
    "HandlerContext",
    "Lifetime",
    "Measurement",
    "ModelCallQuota",
    "ModelSelection",
    "PlanDefinitionError",
    "PlanOverLimitError",
    "PreparedHandle",
    "PreparedHandleError",
    "PreservedTailTooLargeError",
    "Preserve",
    "ProcessingCancelledError",
    "ProcessingReport",
    "ProcessingResult",
    "ProtectedFragmentError",
    "QuotaExhaustedError",
    "ReductionError",
    "SelectionJob",
    "SelectionResult",
    "Selector",
    "SelectorError",
    "SequenceSelection",
    "StageResult",
    "StepCandidate",
    "StepUnavailableError",
    "TokenBudget",
    "TokenCounter",
    "TrimStep",
    "Trust",
    "assemble",
    "create_context_strategy",
    "json_chars",
    "measure",
]
