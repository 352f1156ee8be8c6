"""Invariants over random interleavings of calls, decisions, grants, revocations and epoch rotations.

* No call is ever allowed under an epoch other than the current one, and no
  grant or decision of an older epoch ever allows a call.
* Every queued request is resolved exactly once, whoever races to resolve it
  (people, the timeout, cancellation, rotation), and the waiting call sees that
  one resolution.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.governance import (
    AllowMatching,
    AllowOnce,
    AlreadyResolvedError,
    AuditLog,
    Authorization,
    Deny,
    PermissionEpoch,
    PermissionService,
    RuleSet,
    StaleEpochError,
)

RULES = RuleSet.from_lists(allow=["read_file(data/**)"], ask=["run_code(*)"], deny=["read_file(data/secret/**)"])
CALLS = [("run_code", "*"), ("list_files", "data"), ("list_files", "out"), ("read_file", "data/x"), ("write", "out/y")]
GRANT_RULES = ["run_code(*)", "list_files(data)", "list_files(**)", "write(out/**)"]
DECISIONS = st.one_of(
    st.just(AllowOnce()),
    st.builds(Deny),
    st.builds(AllowMatching, st.sampled_from(["once", "conversation", "session", "project"])),
)
OPERATION = st.one_of(
    st.tuples(st.just("call"), st.integers(0, len(CALLS) - 1), st.sampled_from(["ctx-a", "ctx-b"])),
    st.tuples(st.just("decide"), st.integers(0, 5), DECISIONS),
    st.tuples(st.just("decide_old"), st.integers(0, 50), DECISIONS),
    st.tuples(st.just("grant"), st.sampled_from(GRANT_RULES), st.sampled_from(["once", "session", "project"])),
    st.tuples(st.just("revoke"), st.integers(0, 5)),
    st.tuples(st.just("rotate")),
    st.tuples(st.just("yield")),
)


class Model:
    """What the test itself knows: every grant with its epoch and whether it was revoked."""

    def __init__(self) -> None:
        self.grant_epochs: dict[str, str] = {}
        self.revoked: set[str] = set()
        self.executed: list[tuple[Authorization, str]] = []
        self.requests: list[tuple[str, str]] = []  # (request id, epoch id) ever seen pending


async def _run(service: PermissionService, operations: list[tuple[Any, ...]]) -> Model:
    model = Model()
    tasks = []

    async def call(tool: str, specifier: str, context_id: str) -> None:
        verdict = await service.authorize(
            tool=tool, action="other", specifier=specifier, run_id="run", context_id=context_id
        )
        if verdict.allowed:  # "execute": the handler would run now, with no await in between
            model.executed.append((verdict, service.epoch.epoch_id))
            assert verdict.source.removeprefix("grant:") not in model.revoked

    for operation in operations:
        for request in service.pending():
            if (request.request_id, request.epoch_id) not in model.requests:
                model.requests.append((request.request_id, request.epoch_id))
        kind = operation[0]
        if kind == "call":
            tool, specifier = CALLS[operation[1]]
            tasks.append(asyncio.create_task(call(tool, specifier, operation[2])))
        elif kind in ("decide", "decide_old"):
            pool = service.pending() if kind == "decide" else [service.queue.get(rid) for rid, _ in model.requests]
            if pool:
                request = pool[operation[1] % len(pool)]
                try:
                    service.decide(request.request_id, operation[2])
                except StaleEpochError:
                    assert request.epoch_id != service.epoch.epoch_id
                except AlreadyResolvedError:
                    assert service.queue.resolution(request.request_id) is not None
                else:
                    assert request.epoch_id == service.epoch.epoch_id
        elif kind == "grant":
            grant = service.grant(operation[1], operation[2])
            model.grant_epochs[grant.grant_id] = grant.epoch_id
        elif kind == "revoke":
            grants = service.grants()
            if grants:
                grant = grants[operation[1] % len(grants)]
                service.revoke(grant.grant_id)
                model.revoked.add(grant.grant_id)
        elif kind == "rotate":
            service.rotate()
        for grant in service.grants():
            model.grant_epochs.setdefault(grant.grant_id, grant.epoch_id)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    service.rotate()  # settles whatever is still pending
    await asyncio.gather(*tasks)
    return model


@settings(max_examples=500, deadline=None)
@given(operations=st.lists(OPERATION, min_size=1, max_size=60))
def test_no_call_ever_executes_under_a_stale_epoch(operations: list[tuple[Any, ...]]) -> None:
    """Hundreds of random interleavings (thousands of operations): calls, decisions, grants, revokes, rotations."""
    audit = AuditLog(":memory:")
    service = PermissionService(RULES, PermissionEpoch(), audit)
    model = asyncio.run(_run(service, operations))
    for verdict, epoch_at_execution in model.executed:
        assert verdict.epoch_id == epoch_at_execution
        if verdict.source.startswith("grant:"):
            grant_id = verdict.source.removeprefix("grant:")
            assert model.grant_epochs[grant_id] == verdict.epoch_id
    records = audit.records()
    asked = [r.request_id for r in records if r.outcome == "ask"]
    decided = [r.request_id for r in records if r.outcome.startswith("decision:")]
    assert sorted(asked) == sorted(decided)  # every request resolved, each exactly once
    assert len(set(decided)) == len(decided)
    finals = [r.request_id for r in records if r.outcome in ("allow", "deny") and r.request_id]
    assert sorted(finals) == sorted(asked)  # and each waiting call got exactly one final verdict
    audit.close()


@settings(max_examples=150, deadline=None)
@given(
    racers=st.lists(st.sampled_from(["alice", "bob", "rotate", "cancel"]), min_size=1, max_size=6),
    timeout=st.sampled_from([0.0, 300.0]),
    delays=st.lists(st.integers(0, 3), min_size=6, max_size=6),
)
def test_each_queued_request_resolves_exactly_once(racers: list[str], timeout: float, delays: list[int]) -> None:
    audit = AuditLog(":memory:")
    service = PermissionService(RULES, PermissionEpoch(), audit, timeout_s=timeout)

    async def scenario() -> tuple[list[str], Authorization | None]:
        task = asyncio.create_task(
            service.authorize(tool="run_code", action="code", specifier="*", run_id="r", context_id="c")
        )
        await asyncio.sleep(0)
        request_id = audit.records()[0].request_id
        assert request_id is not None
        outcomes: list[str] = []

        async def racer(name: str, delay: int) -> None:
            for _ in range(delay):
                await asyncio.sleep(0)
            if name == "rotate":
                service.rotate()
                return
            if name == "cancel":
                task.cancel()
                return
            try:
                service.decide(request_id, AllowOnce() if name == "alice" else Deny(), source=name)
                outcomes.append(name)
            except (AlreadyResolvedError, StaleEpochError):
                pass

        await asyncio.gather(*(racer(name, delay) for name, delay in zip(racers, delays, strict=False)))
        service.rotate()
        try:
            verdict = await task
        except asyncio.CancelledError:
            verdict = None
        return outcomes, verdict

    outcomes, verdict = asyncio.run(scenario())
    assert len(outcomes) <= 1
    decisions = [r for r in audit.records() if r.outcome.startswith("decision:")]
    assert len(decisions) == 1
    [decision] = decisions
    if outcomes:
        assert decision.source == outcomes[0]
    if verdict is not None:
        assert verdict.allowed == (decision.source == "alice" and verdict.source.startswith("decision:"))
    audit.close()
