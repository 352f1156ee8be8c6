"""PermissionService end to end: rules, epoch limits, the ask queue as an external wait, grants and rotation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from sciencediscovery.governance import (
    AllowMatching,
    AllowOnce,
    AlreadyResolvedError,
    Authorization,
    Deny,
    GrantScope,
    InvalidDecisionError,
    PermissionService,
    RuleError,
    RuleSet,
    StaleEpochError,
    UnknownGrantError,
    UnknownRequestError,
    decision_from_data,
)
from sciencediscovery.runtime_core import CollectingSink, ExternalWaitFinished, ExternalWaits, ExternalWaitStarted


def _authorize(service: PermissionService, tool: str, specifier: str, *, action: str = "read", **kw: Any) -> Any:
    return service.authorize(
        tool=tool, action=action, specifier=specifier, run_id=kw.get("run_id", "run-1"),
        context_id=kw.get("context_id", "ctx-1"), waits=kw.get("waits"),
    )  # fmt: skip


def _decided(service: PermissionService, tool: str, specifier: str, decide: Callable[[str], object], **kw: Any):
    async def scenario() -> tuple[Authorization, str]:
        task = asyncio.create_task(_authorize(service, tool, specifier, **kw))
        await asyncio.sleep(0)
        [request] = service.pending()
        decide(request.request_id)
        return await task, request.request_id

    return asyncio.run(scenario())


@pytest.mark.parametrize(
    ("tool", "specifier", "action", "allowed", "source"),
    [
        ("read_file", "data/raw.csv", "read", True, "rule:allow:read_file(data/**)"),
        ("read_file", "data/secret/k", "read", False, "rule:deny:read_file(data/secret/**)"),
        ("read_file", "DATA/SECRET/k", "read", False, "rule:deny:read_file(data/secret/**)"),
        ("write_file", "data/raw.csv", "write", False, "epoch"),  # the epoch's data mount is read-only
        ("http_get", "domain:ncbi.nlm.nih.gov", "network", True, "rule:allow:http_get(domain:*.nih.gov)"),
        ("http_get", "domain:evil.nih.gov", "network", False, "rule:deny:http_get(domain:evil.nih.gov)"),
        ("http_get", "domain:example.com", "network", False, "epoch"),  # the epoch's network policy refuses it
        ("http_get", "domain:127.0.0.1", "network", False, "epoch"),
    ],
)
def test_immediate_verdicts_are_audited(
    service: PermissionService, tool: str, specifier: str, action: str, allowed: bool, source: str
) -> None:
    verdict = asyncio.run(_authorize(service, tool, specifier, action=action))
    assert (verdict.allowed, verdict.source) == (allowed, source)
    assert verdict.epoch_id == service.epoch.epoch_id
    [record] = service.audit.records()
    assert (record.outcome, record.source, record.tool, record.specifier) == (
        "allow" if allowed else "deny", source, tool, specifier,
    )  # fmt: skip


def test_ask_waits_as_an_external_wait_and_allow_once_allows_only_that_call(service: PermissionService) -> None:
    sink = CollectingSink()
    waits = ExternalWaits("run-1", "ctx-1", sink.emit)
    verdict, request_id = _decided(
        service, "run_code", "*", lambda rid: service.decide(rid, AllowOnce(), source="user:alice"), waits=waits
    )
    assert verdict.allowed
    assert verdict.source == "decision:allow_once:user:alice"
    started, finished = sink.events
    assert isinstance(started, ExternalWaitStarted)
    assert isinstance(finished, ExternalWaitFinished)
    assert started.wait_kind == "permission"
    assert request_id in started.detail
    assert waits.pending == {}
    assert [(r.outcome, r.source) for r in service.audit.records()] == [
        ("ask", "rule:ask:run_code(*)"),
        ("decision:allow_once", "user:alice"),
        ("allow", "decision:allow_once:user:alice"),
    ]
    again, _ = _decided(service, "run_code", "*", lambda rid: service.decide(rid, Deny("not now")))
    assert not again.allowed
    assert again.reason == "not now"


def test_allow_matching_conversation_grant_stays_in_its_conversation(service: PermissionService) -> None:
    _decided(service, "list_files", "data", lambda rid: service.decide(rid, AllowMatching("conversation")))
    [grant] = service.grants()
    assert grant.rule.text == "list_files(data)"
    same = asyncio.run(_authorize(service, "list_files", "data"))
    assert same.allowed
    assert same.source == f"grant:{grant.grant_id}"
    other = _decided(service, "list_files", "data", lambda rid: service.decide(rid, Deny()), context_id="ctx-2")[0]
    assert not other.allowed


def test_allow_matching_with_an_explicit_rule_and_session_scope(service: PermissionService) -> None:
    _decided(
        service,
        "write_file",
        "out/a.txt",
        lambda rid: service.decide(rid, AllowMatching("session", "write_file(out/**)")),
        action="write",
    )
    later = asyncio.run(_authorize(service, "write_file", "out/sub/b.txt", action="write", context_id="ctx-9"))
    assert later.allowed
    denied_anyway = asyncio.run(_authorize(service, "write_file", "data/x", action="write"))
    assert not denied_anyway.allowed  # a grant never overrides the epoch's read-only mount


def test_a_grant_never_beats_a_deny_rule(service: PermissionService) -> None:
    service.grant("read_file(**)", GrantScope.SESSION)
    assert not asyncio.run(_authorize(service, "read_file", "data/secret/k")).allowed


def test_once_grants_are_used_up(service: PermissionService) -> None:
    service.grant("list_files(out)", "once")
    assert asyncio.run(_authorize(service, "list_files", "out")).allowed
    assert service.grants() == []


def test_once_grants_are_spent_only_where_needed(service: PermissionService) -> None:
    grant = service.grant("read_file(data/**)", "once")
    assert asyncio.run(_authorize(service, "read_file", "data/raw.csv")).source == "rule:allow:read_file(data/**)"
    assert service.grants() == [grant]  # the allow rule decided; the grant is still there


def test_grants_answer_a_default_deny(make_service: Callable[..., PermissionService]) -> None:
    service = make_service(rules=RuleSet(default="deny"))
    assert not asyncio.run(_authorize(service, "list_files", "out")).allowed
    service.grant("list_files(out)", "session")
    assert asyncio.run(_authorize(service, "list_files", "out")).allowed


def test_revoked_grants_stop_allowing(service: PermissionService) -> None:
    grant = service.grant("list_files(out)", "session")
    service.revoke(grant.grant_id, source="user:alice")
    verdict, _ = _decided(service, "list_files", "out", lambda rid: service.decide(rid, Deny()))
    assert not verdict.allowed
    with pytest.raises(UnknownGrantError):
        service.revoke(grant.grant_id)


def test_allow_matching_needs_an_explicit_rule_for_glob_like_specifiers(service: PermissionService) -> None:
    async def scenario() -> None:
        task = asyncio.create_task(_authorize(service, "list_files", "out/*"))
        await asyncio.sleep(0)
        [request] = service.pending()
        with pytest.raises(RuleError, match="explicit rule"):
            service.decide(request.request_id, AllowMatching("session"))
        assert service.pending() == [request]  # still pending after a refused decision
        service.decide(request.request_id, AllowOnce())
        assert (await task).allowed

    asyncio.run(scenario())


def test_timeout_resolves_as_deny(make_service: Callable[..., PermissionService]) -> None:
    service = make_service(timeout_s=0.01)
    verdict = asyncio.run(_authorize(service, "run_code", "*"))
    assert not verdict.allowed
    assert verdict.source == "decision:deny:timeout"
    assert service.pending() == []
    with pytest.raises(AlreadyResolvedError):
        service.decide(verdict.request_id, AllowOnce())  # type: ignore[arg-type]


def test_each_request_resolves_exactly_once_and_unknown_ids_are_errors(service: PermissionService) -> None:
    def decide_twice(request_id: str) -> None:
        service.decide(request_id, AllowOnce())
        with pytest.raises(AlreadyResolvedError, match="already resolved"):
            service.decide(request_id, Deny())

    assert _decided(service, "run_code", "*", decide_twice)[0].allowed
    with pytest.raises(UnknownRequestError):
        service.decide("perm-nope", AllowOnce())


def test_wait_pending_returns_once_a_request_arrives(service: PermissionService) -> None:
    async def scenario() -> None:
        watcher = asyncio.create_task(service.wait_pending())
        await asyncio.sleep(0)
        assert not watcher.done()
        call = asyncio.create_task(_authorize(service, "run_code", "*"))
        [request] = await watcher
        assert request.tool == "run_code"
        service.decide(request.request_id, Deny())
        assert not (await call).allowed

    asyncio.run(scenario())


def test_cancelled_calls_withdraw_their_request(service: PermissionService) -> None:
    async def scenario() -> str:
        task = asyncio.create_task(_authorize(service, "run_code", "*"))
        await asyncio.sleep(0)
        [request] = service.pending()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return request.request_id

    request_id = asyncio.run(scenario())
    assert service.pending() == []
    assert service.queue.resolution(request_id).source == "cancelled"  # type: ignore[union-attr]


def test_rotation_voids_grants_and_pending_requests_and_stale_decisions_are_refused(
    service: PermissionService,
) -> None:
    async def scenario() -> None:
        service.grant("run_code(*)", "session")
        assert (await _authorize(service, "run_code", "*")).allowed
        old_epoch = service.epoch.epoch_id
        new_epoch = service.rotate().epoch_id
        assert service.grants() == []
        task = asyncio.create_task(_authorize(service, "run_code", "*"))
        await asyncio.sleep(0)
        [request] = service.pending()
        assert request.epoch_id == new_epoch
        service.rotate(environment_revision="env-rev-2")
        verdict = await task
        assert not verdict.allowed
        assert verdict.source == "epoch_rotation"
        with pytest.raises(StaleEpochError) as raised:
            service.decide(request.request_id, AllowOnce())
        assert raised.value.epoch_id == new_epoch
        assert raised.value.current_epoch_id == service.epoch.epoch_id != old_epoch

    asyncio.run(scenario())


def test_project_grants_are_shared_by_sessions_until_revoked_or_rotated(
    make_service: Callable[..., PermissionService],
) -> None:
    first = make_service()
    first.grant("list_files(data)", "session")
    second = make_service()  # another session over the same audit file and the same epoch content
    grant = second.grant("list_files(out)", "project", source="user:alice")
    assert [g.grant_id for g in first.grants() if g.scope is GrantScope.PROJECT] == [grant.grant_id]
    assert asyncio.run(_authorize(first, "list_files", "out")).allowed
    assert [g.rule.text for g in second.grants()] == ["list_files(out)"]  # session grants stay in their session
    first.revoke(grant.grant_id)
    assert second.grants() == []  # revoked everywhere at once
    third = make_service()
    third.grant("list_files(out)", "project")
    old_epoch = third.epoch.epoch_id
    third.rotate()
    assert third.grants() == []
    restarted = make_service()  # a restart with the same configuration does not resume the retired epoch
    assert restarted.epoch.epoch_id == third.epoch.epoch_id != old_epoch
    assert restarted.grants() == []
    assert [g for g in first.grants() if g.scope is GrantScope.PROJECT] == []  # void even where still current


def test_describe_is_plain_data(service: PermissionService) -> None:
    service.grant("list_files(out)", "session")
    described = service.describe()
    assert described["epoch"]["epoch_id"] == service.epoch.epoch_id
    assert described["epoch"]["secret_refs"] == ["NCBI_API_KEY"]
    assert described["rules"]["deny"] == ["read_file(data/secret/**)", "http_get(domain:evil.nih.gov)"]
    assert described["grants"][0]["scope"] == "session"
    assert described["pending_requests"] == 0


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"kind": "allow_once"}, AllowOnce()),
        ({"kind": "deny"}, Deny()),
        ({"kind": "deny", "reason": "no"}, Deny("no")),
        ({"kind": "allow_matching", "scope": "session"}, AllowMatching("session")),
        (
            {"kind": "allow_matching", "scope": "project", "rule": "read_file(data/**)"},
            AllowMatching("project", "read_file(data/**)"),
        ),
    ],
)
def test_decisions_from_json_data(data: dict[str, Any], expected: object) -> None:
    assert decision_from_data(data) == expected


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"kind": "allow"}, "kind"),
        ({}, "kind"),
        ({"kind": "allow_once", "scope": "session"}, "scope"),
        ({"kind": "allow_matching", "scope": "forever"}, "scope"),
        ({"kind": "allow_matching", "scope": "session", "rule": 3}, "rule"),
        ({"kind": "deny", "reason": 3}, "reason"),
        (["allow_once"], "body"),
    ],
)
def test_malformed_decisions_name_the_field(data: Any, field: str) -> None:
    with pytest.raises(InvalidDecisionError) as raised:
        decision_from_data(data)
    assert raised.value.field == field


def test_decide_refuses_a_non_decision(service: PermissionService) -> None:
    with pytest.raises(InvalidDecisionError):
        service.decide("perm-1", "allow_once")  # type: ignore[arg-type]


def test_is_denied_answers_deny_rules_and_epoch_limits_without_side_effects(service: PermissionService) -> None:
    service.grant("read_file(**)", GrantScope.SESSION)  # grants never lift a deny rule or a limit
    before = service.audit.records()
    assert service.is_denied("read_file", "data/secret/key.txt")  # deny rule
    assert service.is_denied("read_file", "DATA/Secret/key.txt")  # the broad view
    assert service.is_denied("search_files", "data/secret/key.txt") is False  # the rule names read_file only
    assert service.is_denied("read_file", "data/raw.csv") is False  # allowed
    assert service.is_denied("run_code", "*") is False  # ask: not surely denied
    assert service.is_denied("list_files", "nothing/matches") is False  # the default (ask)
    assert service.is_denied("write_file", "data/raw.csv", action="write")  # read-only mount in the epoch
    assert service.is_denied("write_file", "data/../data/raw.csv", action="write")
    assert service.is_denied("write_file", "out/x", action="write") is False
    assert service.is_denied("list_files", "data/raw.csv") is False  # reading a read-only mount is fine
    assert service.is_denied("http_get", "domain:example.com")  # the epoch's network policy
    assert service.is_denied("http_get", "domain:evil.nih.gov")  # deny rule
    assert service.is_denied("http_get", "domain:ncbi.nlm.nih.gov") is False
    assert service.audit.records() == before
    assert service.pending() == []


def test_is_denied_ignores_a_default_deny(make_service: Callable[..., PermissionService]) -> None:
    service = make_service(RuleSet.from_lists(deny=["*(data/secret/**)"], default="deny"))
    assert service.is_denied("list_files", "data/secret") is True
    assert service.is_denied("list_files", "data/other") is False


def test_a_dot_dot_specifier_is_never_granted_but_still_meets_the_epoch_limits(
    make_service: Callable[..., PermissionService],
) -> None:
    service = make_service(RuleSet(default="deny"))  # grants answer a default deny
    service.grant("http_get(http://127.0.0.1:8000/**)", GrantScope.SESSION)
    service.grant("write_file(**)", GrantScope.SESSION)
    fetch = asyncio.run(_authorize(service, "http_get", "http://127.0.0.2:9/../127.0.0.1:8000/x", action="network"))
    assert (fetch.allowed, fetch.source) == (False, "default:deny")
    granted = asyncio.run(_authorize(service, "http_get", "http://127.0.0.1:8000/x", action="network"))
    assert granted.allowed
    write = asyncio.run(_authorize(service, "write_file", "out/../data/raw.csv", action="write"))
    assert (write.allowed, write.source) == (False, "epoch")  # the read-only data mount, found through '..'
