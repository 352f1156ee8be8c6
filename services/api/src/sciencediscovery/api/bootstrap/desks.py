"""Adapters between the service and domain packages: the permission desk, the review runner, the progress display."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
from rich.console import Console
from rich.status import Status

from sciencediscovery.artifact_manager import open_store
from sciencediscovery.artifact_manager.tools import artifact_json
from sciencediscovery.governance import PermissionService, decision_from_data
from sciencediscovery.governance.errors import (
    AlreadyResolvedError,
    GovernanceError,
    StaleEpochError,
    UnknownRequestError,
)
from sciencediscovery.orchestration import Reviewer
from sciencediscovery.provenance.errors import UnknownRecordError
from sciencediscovery.provenance.export import export_prov_json
from sciencediscovery.provenance.review import ReviewDecision, ReviewEvidence, ReviewFinding, ReviewLevel, ReviewOutcome
from sciencediscovery.provenance.settings import store_for
from sciencediscovery.runtime_core import RunEvent

from ..errors import DecisionConflictError, ServiceError, UnknownPermissionRequestError
from ..runs import LiveEvents
from ..store import RunRecord


class GovernanceDesk:
    """The HTTP permission API over governance's PermissionService."""

    def __init__(self, service: PermissionService) -> None:
        self.service = service

    def pending(self) -> list[Mapping[str, Any]]:
        return [{**attrs.asdict(request), "id": request.request_id} for request in self.service.pending()]

    def decide(self, request_id: str, decision: str, scope: str | None) -> Mapping[str, Any]:
        data: dict[str, Any] = {"kind": decision}
        if decision == "allow_matching":
            data["scope"] = scope or "once"
        try:
            request = self.service.decide(request_id, decision_from_data(data), source="http")
        except UnknownRequestError as error:
            raise UnknownPermissionRequestError(request_id) from error
        except (StaleEpochError, AlreadyResolvedError) as error:
            raise DecisionConflictError(str(error)) from error
        except GovernanceError as error:
            raise ServiceError(str(error)) from error
        return {**attrs.asdict(request), "id": request.request_id, "decision": decision}


class ReviewRunnerAdapter:
    """Provenance's ReviewRunner port, answered by orchestration's read-only Reviewer."""

    def __init__(self, reviewer: Reviewer) -> None:
        self.reviewer = reviewer

    async def review(self, objective: str, evidence: ReviewEvidence, level: ReviewLevel) -> ReviewOutcome:
        outcome = await self.reviewer.review(objective, evidence.render(), level.value)
        decision = outcome.decision if outcome.decision in {d.value for d in ReviewDecision} else None
        findings: tuple[ReviewFinding, ...] = tuple(
            ReviewFinding(message=f.message, severity=f.severity, claim_id=f.claim_id) for f in outcome.findings
        )
        return ReviewOutcome(
            decision=ReviewDecision(decision) if decision else ReviewDecision.REVISE_AND_RETRY,
            findings=findings,
            summary=outcome.summary if decision else f"the reviewer gave no usable decision: {outcome.summary}",
        )


class ProgressDisplay:
    """A live one-line status of a run on a terminal (turns, tools, waits).

    With ``notices`` and no terminal, permission waits are still announced as plain
    lines on stderr, so an unattended run never waits in silence.
    """

    def __init__(self, live: LiveEvents, context_id: str, *, enabled: bool, notices: bool = False) -> None:
        self.live = live
        self.context_id = context_id
        self.enabled = enabled or notices
        self.terminal = enabled
        self._status: Status | None = None
        self._queue: asyncio.Queue[RunEvent | None] | None = None
        self._task: asyncio.Task[None] | None = None

    def __enter__(self) -> ProgressDisplay:
        if self.terminal:
            self._status = Status("starting", console=Console(stderr=True))
            self._status.start()
        if self.enabled:
            self._queue = self.live.subscribe(self.context_id)
            self._task = asyncio.get_running_loop().create_task(self._follow())
        return self

    async def _follow(self) -> None:
        assert self._queue is not None
        while (event := await self._queue.get()) is not None:
            text = _describe(event)
            if text and self._status is not None:
                self._status.update(text)
            elif event.kind == "external_wait_started" and event.wait_kind == "permission":  # type: ignore[attr-defined]
                print(
                    f"waiting for a permission decision: {event.detail} "  # type: ignore[attr-defined]
                    "(decide through the HTTP API, or allow it with SCIENCE_AGENT_PERMISSION_ALLOW; "
                    "unanswered requests are denied after SCIENCE_AGENT_PERMISSION_TIMEOUT_S)",
                    file=sys.stderr,
                    flush=True,
                )

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._queue is not None:
            self.live.unsubscribe(self.context_id, self._queue)
        if self._status is not None:
            self._status.stop()


def _describe(event: RunEvent) -> str | None:
    turn = getattr(event, "turn", None)
    if event.kind == "turn_started":
        return f"turn {turn}: waiting for the model"
    if event.kind == "tool_started":
        return f"turn {turn}: running {event.call.name}"  # type: ignore[attr-defined]
    if event.kind == "external_wait_started":
        return f"turn {turn}: waiting for {event.wait_kind} ({event.detail})"  # type: ignore[attr-defined]
    if event.kind == "overflow_recovery":
        return f"turn {turn}: context overflow, compacting and retrying once"
    return None


class RecordsDesk:
    """Read-only views of a session's artifacts and provenance for the HTTP API."""

    def __init__(self, data_dir: Path, runs_of: Callable[[str], list[RunRecord]]) -> None:
        self.data_dir = data_dir
        self.runs_of = runs_of

    def artifacts(self, context_id: str) -> list[Mapping[str, Any]]:
        return [artifact_json(artifact) for artifact in open_store(self.data_dir).artifacts(context_id=context_id)]

    def provenance(self, context_id: str) -> Mapping[str, Any]:
        """Each run's W3C PROV-JSON document and the session's tool-execution records."""
        store = store_for({"data_dir": str(self.data_dir)})
        documents = {}
        for run in self.runs_of(context_id):
            try:
                documents[run.run_id] = json.loads(export_prov_json(store, run.run_id))
            except UnknownRecordError:
                continue  # the run died before provenance saw it start
        return {
            "runs": documents,
            "executions": [attrs.asdict(record) for record in store.context_executions(context_id)],
        }
