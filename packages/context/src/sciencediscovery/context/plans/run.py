"""Run-scoped services of direct model calls: preparation, quota, deadline, and the final guarded call."""

from __future__ import annotations

from sciencediscovery.runtime_core import ModelClient, ModelResponse, TurnContext

from .errors import PlanDefinitionError
from .events import ProcessingReport, StageObserver
from .fragments import ContextPlan
from .handlers import HandlerContext, handler_max_calls
from .prepared import Preparation, PreparedHandle
from .quota import ModelCallQuota
from .request import ContextRequest, DirectInput, assemble, check_limits
from .signals import CancelSignal
from .validators import check_timeout

__all__ = ["ContextRun"]


class ContextRun:
    """One run's model client, identity and event sink (``turn``), model-call quota, deadline and cancellation.

    ``timeout_s`` is the run's basic limit for one processing stage or call; ``cancel`` is
    the parent signal every stage and internal model request combines with.
    """

    def __init__(
        self,
        client: ModelClient,
        turn: TurnContext,
        *,
        max_model_calls: int,
        timeout_s: float | None = None,
        cancel: CancelSignal | None = None,
    ) -> None:
        self.client = client
        self.turn = turn
        self.quota = ModelCallQuota(max_model_calls)
        self.signal = cancel if cancel is not None else CancelSignal()
        check_timeout(timeout_s, "timeout_s")
        self.timeout_s = timeout_s

    def prepare(self, request: ContextRequest) -> PreparedHandle:
        """Prepare ``request`` once; stages hand the returned handle on instead of preparing again."""
        if not isinstance(request, ContextRequest):
            raise PlanDefinitionError("request", f"must be a ContextRequest, got {type(request).__name__}")
        return Preparation(request, self).handle()

    def take(self, request: ContextRequest | None, prepared: PreparedHandle | None) -> Preparation:
        """Consume ``prepared`` (checked against ``request``) or prepare ``request`` now."""
        if prepared is not None:
            return prepared.consume(self, request)
        if request is None:
            raise PlanDefinitionError("request", "give a ContextRequest or a prepared handle")
        return self.prepare(request).consume(self, None)

    def stage_signal(self, timeout_s: float | None) -> CancelSignal:
        """The signal of one stage: ``timeout_s`` (or the run's limit) combined with the parent signal."""
        return self.signal.child(timeout_s if timeout_s is not None else self.timeout_s)

    def handler_context(self, handler: object, signal: CancelSignal, *, allow_tools: bool) -> HandlerContext:
        """Guarded model access for a selector or compressor."""
        return HandlerContext(
            str(getattr(handler, "id", "handler")),
            handler_max_calls(handler),
            client=self.client,
            turn=self.turn,
            quota=self.quota,
            signal=signal,
            allow_tools=allow_tools,
        )

    async def invoke(
        self, value: DirectInput, *, request: ContextRequest | None = None, prepared: PreparedHandle | None = None
    ) -> ModelResponse:
        """Build, measure and send one request; the measured snapshot is the object sent.

        Over-limit input raises :class:`PlanOverLimitError` and nothing is sent; no
        processing is ever inserted here. Consumes ``prepared``; uses one call of the quota.
        """
        preparation = self.take(request, prepared)
        req = preparation.request
        with StageObserver(self.turn, "invoke", req.request_id) as observer:
            model_input = assemble(value, req)
            measured = check_limits(model_input, req, value if isinstance(value, ContextPlan) else None)
            observer.transition("measured", f"body={measured.body_chars} schema={measured.schema_chars}")
            self.quota.charge(1)
            signal = self.stage_signal(None)
            response = await signal.run(self.client.complete(model_input, self.turn), "invoke")
            observer.completed(
                ProcessingReport("invoke", req.request_id, "direct", after=measured, within_budget=True, model_calls=1)
            )
        return response
