"""The SQLite session store on a real file."""

from __future__ import annotations

import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.api.errors import SessionExistsError, StoreError, UnknownRunError, UnknownSessionError
from sciencediscovery.api.store import SqliteSessionStore, StoreEventSink
from sciencediscovery.runtime_core import HistoryReplaced, Message, StepCommitted, ToolCall


@pytest.fixture
def store(tmp_path):
    store = SqliteSessionStore(tmp_path / "data" / "sessions.sqlite")
    yield store
    store.close()


def test_store_file_is_private_and_uses_wal_with_full_sync(store):
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert store._query("PRAGMA journal_mode")[0][0] == "wal"
    assert store._query("PRAGMA synchronous")[0][0] == 2  # FULL


def test_history_round_trips_and_survives_reopen(tmp_path):
    path = tmp_path / "s.sqlite"
    store = SqliteSessionStore(path)
    store.create_session("ctx", {"objective": "x"}, {"mode": "dynamic"})
    call = ToolCall("c1", "read_file", {"path": "a.csv"})
    step = [Message.assistant("", [call]), Message.tool_result(call, "data", trust="untrusted")]
    store.append_step("ctx", [Message.user("go")])
    store.append_step("ctx", step)
    store.close()
    reopened = SqliteSessionStore(path)
    assert reopened.load_history("ctx") == (Message.user("go"), *step)
    assert reopened.get_session("ctx").structured_input == {"objective": "x"}


def test_unknown_and_duplicate_sessions_are_typed_errors(store):
    with pytest.raises(UnknownSessionError, match="'nope'"):
        store.load_history("nope")
    with pytest.raises(UnknownSessionError, match="'nope'"):
        store.append_step("nope", [Message.user("x")])
    store.create_session("ctx", {}, {})
    with pytest.raises(SessionExistsError, match="'ctx'"):
        store.create_session("ctx", {}, {})
    with pytest.raises(UnknownRunError, match="'run-x'"):
        store.get_run("run-x")


def test_a_failing_step_writes_nothing(store):
    store.create_session("ctx", {}, {})
    store.append_step("ctx", [Message.user("kept")])

    broken = Message.user("half")
    with pytest.raises(Exception):  # noqa: B017 - any failure must roll back
        store.append_step("ctx", [broken, object()])  # type: ignore[list-item]
    assert store.load_history("ctx") == (Message.user("kept"),)


def test_unreadable_row_is_a_store_error_naming_the_session(store):
    store.create_session("ctx", {}, {})
    store.append_step("ctx", [Message.user("x")])
    store._db.execute('UPDATE messages SET body = \'{"role": "user", "evil": 1}\'')
    with pytest.raises(StoreError, match="session 'ctx' has an unreadable message"):
        store.load_history("ctx")


def test_runs_lifecycle_and_interrupted_marking(store):
    store.create_session("ctx", {}, {})
    store.start_run("run-1", "ctx")
    store.start_run("run-2", "ctx")
    store.finish_run("run-1", "completed", "done", 3, {"final": "ok"})
    interrupted = store.mark_unfinished_runs_interrupted()
    assert [r.run_id for r in interrupted] == ["run-2"]
    assert store.get_run("run-2").status == "interrupted"
    assert store.get_run("run-1").status == "completed"
    assert store.get_run("run-1").result == {"final": "ok"}
    assert [r.run_id for r in store.runs_of("ctx")] == ["run-1", "run-2"]


def test_events_are_ordered_and_paged(store):
    store.create_session("ctx", {}, {})
    ids = [store.append_event("ctx", "run-1", "turn_started", {"turn": i}) for i in range(5)]
    assert ids == sorted(ids)
    after = store.events_after("ctx", ids[1], limit=2)
    assert [e.id for e in after] == ids[2:4]
    assert after[0].data == {"turn": 2}


def test_sink_persists_steps_and_replacements(store):
    store.create_session("ctx", {}, {})
    sink = StoreEventSink(store)
    sink.emit(StepCommitted(run_id="r", context_id="ctx", turn=1, messages=(Message.user("a"), Message.assistant("b"))))
    assert store.load_history("ctx") == (Message.user("a"), Message.assistant("b"))
    sink.emit(HistoryReplaced(run_id="r", context_id="ctx", turn=2, history=(Message.user("summary"),)))
    assert store.load_history("ctx") == (Message.user("summary"),)
    assert [e.kind for e in store.events_after("ctx", 0)] == ["step_committed", "history_replaced"]


operations = st.lists(
    st.tuples(st.sampled_from(["append", "replace"]), st.lists(st.text(max_size=20), min_size=1, max_size=4)),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(operations)
def test_history_equals_the_model_after_any_operation_sequence(tmp_path_factory, ops):
    store = SqliteSessionStore(tmp_path_factory.mktemp("prop") / "s.sqlite")
    store.create_session("ctx", {}, {})
    model: list[Message] = []
    for op, texts in ops:
        messages = [Message.user(t) for t in texts]
        if op == "append":
            store.append_step("ctx", messages)
            model.extend(messages)
        else:
            store.replace_history("ctx", messages)
            model = messages
    assert store.load_history("ctx") == tuple(model)
    store.close()


def test_unopenable_path_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot open session store"):
        SqliteSessionStore(blocker / "sub" / "s.sqlite")


def test_last_turn_comes_from_the_event_log(store):
    store.create_session("ctx", {}, {})
    assert store.last_turn("ctx") == 0
    for turn in (1, 2, 3):
        store.append_event("ctx", "run-1", "turn_started", {"turn": turn})
    store.append_event("ctx", "run-1", "model_output", {"turn": 9})
    assert store.last_turn("ctx") == 3
