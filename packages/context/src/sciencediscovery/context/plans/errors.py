"""Typed errors of context plans and processing; each names the limit, fragment, step or handle at fault."""

from __future__ import annotations

from sciencediscovery.runtime_core import RuntimeCoreError


class ContextPlanError(RuntimeCoreError):
    """Base class of every error raised by context plans and processing."""


class PlanDefinitionError(ContextPlanError, ValueError):
    """A fragment, plan, request, policy or step is malformed; ``field`` names what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")


class PlanOverLimitError(ContextPlanError):
    """The measured request exceeds a hard limit; nothing was sent to the model."""

    def __init__(self, limit_name: str, limit: int, measured: int, fragment_ids: tuple[str, ...]) -> None:
        self.limit_name = limit_name
        self.limit = limit
        self.measured = measured
        self.fragment_ids = fragment_ids
        involved = ", ".join(fragment_ids) or "none"
        super().__init__(f"{limit_name} is {limit} but the request measures {measured} (fragments: {involved})")


class ProtectedFragmentError(ContextPlanError):
    """A step or an application change touched an immutable fragment, or changed a fragment's identity or trust."""

    def __init__(self, fragment_id: str, message: str) -> None:
        self.fragment_id = fragment_id
        super().__init__(f"fragment {fragment_id!r}: {message}")


class ReductionError(ContextPlanError):
    """A reduction step produced an invalid result (grew the fragment, broke fields or grouping)."""

    def __init__(self, step_id: str, message: str) -> None:
        self.step_id = step_id
        super().__init__(f"step {step_id!r}: {message}")


class PreservedTailTooLargeError(ReductionError):
    """The recent groups a compress step must preserve already exceed its target; nothing is deleted."""


class StepUnavailableError(ContextPlanError):
    """A step id is unknown to the policy, already ran for this request, or is not affordable."""

    def __init__(self, step_id: str, message: str) -> None:
        self.step_id = step_id
        super().__init__(f"step {step_id!r}: {message}")


class SelectorError(ContextPlanError):
    """A model selector answered something other than one offered step id, or asked for more than it may."""

    def __init__(self, selector_id: str, message: str) -> None:
        self.selector_id = selector_id
        super().__init__(f"selector {selector_id!r}: {message}")


class HandlerCallLimitError(ContextPlanError):
    """A selector or compressor tried more model calls than its ``max_calls``."""

    def __init__(self, handler_id: str, max_calls: int) -> None:
        self.handler_id = handler_id
        self.max_calls = max_calls
        super().__init__(f"handler {handler_id!r} may make at most {max_calls} model call(s)")


class QuotaExhaustedError(ContextPlanError):
    """The run's total model-call quota has no call left for this request."""

    def __init__(self, total: int, used: int, wanted: int) -> None:
        self.total = total
        self.used = used
        self.wanted = wanted
        super().__init__(f"model-call quota exhausted: {used} of {total} used, {wanted} more wanted")


class PreparedHandleError(ContextPlanError):
    """A prepared handle was reused after being consumed, or used for another request or run."""

    def __init__(self, request_id: str, message: str) -> None:
        self.request_id = request_id
        super().__init__(f"prepared handle of request {request_id!r}: {message}")


class ProcessingCancelledError(ContextPlanError):
    """Processing was cancelled by the parent signal or passed its deadline; no result was committed."""

    def __init__(self, stage: str, reason: str) -> None:
        self.stage = stage
        self.reason = reason
        super().__init__(f"context {stage} stopped: {reason}")
