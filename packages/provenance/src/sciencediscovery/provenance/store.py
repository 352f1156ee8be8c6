"""The provenance store: one SQLite file (WAL, 0600) holding runs, turns, tool records, derivations, claims and reviews.

Every writer upserts by natural key (run and turn, run and call id), so the
event sink, the tool observer and the model-client wrapper can each add what
they know about the same execution without creating a second record.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from ._sqlite import connect
from .claims import Claim, EvidenceOrigin, EvidenceRef, EvidenceRelation
from .errors import UnknownRecordError
from .records import Derivation, ModelTurnManifest, RunRecord, ToolExecutionRecord
from .review import ReviewDecision, ReviewFinding, ReviewLevel, ReviewRecord

FILENAME = "provenance.sqlite3"

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, context_id TEXT NOT NULL, started_at TEXT NOT NULL,
    finished_at TEXT, status TEXT, turns INTEGER);
CREATE TABLE IF NOT EXISTS model_turns (
    run_id TEXT NOT NULL, context_id TEXT NOT NULL, turn INTEGER NOT NULL, input_hash TEXT, model TEXT,
    output_hash TEXT, finish_reason TEXT, input_tokens INTEGER, output_tokens INTEGER, cached_tokens INTEGER,
    tool_calls INTEGER, recorded_at TEXT NOT NULL, PRIMARY KEY (run_id, turn));
CREATE TABLE IF NOT EXISTS tool_executions (
    run_id TEXT NOT NULL, context_id TEXT NOT NULL, call_id TEXT NOT NULL, turn INTEGER NOT NULL, tool TEXT NOT NULL,
    argument_hash TEXT NOT NULL, result_hash TEXT, status TEXT, error_kind TEXT, action TEXT, source TEXT,
    permission_epoch TEXT, environment_revision TEXT, started_at TEXT, finished_at TEXT, duration_s REAL,
    PRIMARY KEY (run_id, call_id));
CREATE INDEX IF NOT EXISTS tool_executions_context ON tool_executions (context_id, call_id);
CREATE TABLE IF NOT EXISTS derivations (
    run_id TEXT NOT NULL, call_id TEXT NOT NULL, sha256 TEXT NOT NULL, name TEXT NOT NULL, media_type TEXT,
    recorded_at TEXT NOT NULL, PRIMARY KEY (run_id, call_id, sha256));
CREATE TABLE IF NOT EXISTS claims (
    claim_id TEXT PRIMARY KEY, context_id TEXT NOT NULL, run_id TEXT NOT NULL, call_id TEXT,
    statement TEXT NOT NULL, evidence TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS claims_context ON claims (context_id, created_at);
CREATE TABLE IF NOT EXISTS reviews (
    review_id TEXT PRIMARY KEY, context_id TEXT NOT NULL, run_id TEXT NOT NULL, call_id TEXT, objective TEXT NOT NULL,
    level TEXT NOT NULL, decision TEXT NOT NULL, findings TEXT NOT NULL, summary TEXT NOT NULL,
    evidence_digest TEXT NOT NULL, error TEXT, created_at TEXT NOT NULL);
"""


def now() -> str:
    """The current UTC time as ISO 8601."""
    return datetime.now(UTC).isoformat()


class ProvenanceStore:
    """Reads and writes provenance in ``<data_dir>/provenance.sqlite3``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path, SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def _write(self, sql: str, params: Iterable[Any]) -> None:
        with self._lock:
            self._db.execute(sql, tuple(params))

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, tuple(params)).fetchall()

    # -- runs ---------------------------------------------------------------
    def run_started(self, run_id: str, context_id: str) -> None:
        self._write(
            "INSERT INTO runs (run_id, context_id, started_at) VALUES (?, ?, ?) ON CONFLICT (run_id) DO NOTHING",
            (run_id, context_id, now()),
        )

    def run_finished(self, run_id: str, context_id: str, status: str, turns: int) -> None:
        self._write(
            "INSERT INTO runs (run_id, context_id, started_at, finished_at, status, turns) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id) DO UPDATE SET finished_at = excluded.finished_at, status = excluded.status, "
            "turns = excluded.turns",
            (run_id, context_id, now(), now(), status, turns),
        )

    def run(self, run_id: str) -> RunRecord:
        rows = self._rows("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise UnknownRecordError(f"no provenance for run_id {run_id!r}")
        return RunRecord(**dict(rows[0]))

    # -- model turns --------------------------------------------------------
    def model_input_seen(self, run_id: str, context_id: str, turn: int, input_hash: str, model: str | None) -> None:
        self._write(
            "INSERT INTO model_turns (run_id, context_id, turn, input_hash, model, recorded_at) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, turn) DO UPDATE SET input_hash = excluded.input_hash, "
            "model = COALESCE(excluded.model, model_turns.model)",
            (run_id, context_id, turn, input_hash, model, now()),
        )

    def model_output_seen(
        self,
        run_id: str,
        context_id: str,
        turn: int,
        *,
        output_hash: str,
        finish_reason: str,
        usage: tuple[int, int, int],
        tool_calls: int,
    ) -> None:
        self._write(
            "INSERT INTO model_turns (run_id, context_id, turn, output_hash, finish_reason, input_tokens, "
            "output_tokens, cached_tokens, tool_calls, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, turn) DO UPDATE SET output_hash = excluded.output_hash, "
            "finish_reason = excluded.finish_reason, input_tokens = excluded.input_tokens, "
            "output_tokens = excluded.output_tokens, cached_tokens = excluded.cached_tokens, "
            "tool_calls = excluded.tool_calls",
            (run_id, context_id, turn, output_hash, finish_reason, *usage, tool_calls, now()),
        )

    def model_turns(self, run_id: str) -> list[ModelTurnManifest]:
        rows = self._rows("SELECT * FROM model_turns WHERE run_id = ? ORDER BY turn", (run_id,))
        return [ModelTurnManifest(**dict(row)) for row in rows]

    # -- tool executions ----------------------------------------------------
    def tool_observed(
        self,
        *,
        run_id: str,
        context_id: str,
        call_id: str,
        turn: int,
        tool: str,
        argument_hash: str,
        action: str,
        source: str,
        permission_epoch: str | None,
        environment_revision: str | None = None,
    ) -> None:
        """What the tool observer knows: the tool's policy facts, the environment it ran in, when it finished."""
        self._write(
            "INSERT INTO tool_executions (run_id, context_id, call_id, turn, tool, argument_hash, action, source, "
            "permission_epoch, environment_revision, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, call_id) DO UPDATE SET action = excluded.action, source = excluded.source, "
            "permission_epoch = excluded.permission_epoch, environment_revision = excluded.environment_revision, "
            "finished_at = COALESCE(tool_executions.finished_at, excluded.finished_at)",
            (
                run_id,
                context_id,
                call_id,
                turn,
                tool,
                argument_hash,
                action,
                source,
                permission_epoch,
                environment_revision,
                now(),
            ),
        )

    def tool_timed(
        self, *, run_id: str, context_id: str, call_id: str, turn: int, tool: str, argument_hash: str, duration_s: float
    ) -> None:
        """The kernel's measured duration (from ``ToolFinished``)."""
        finished = datetime.now(UTC)
        started = datetime.fromtimestamp(finished.timestamp() - duration_s, UTC)
        self._write(
            "INSERT INTO tool_executions (run_id, context_id, call_id, turn, tool, argument_hash, started_at, "
            "finished_at, duration_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, call_id) DO UPDATE SET started_at = excluded.started_at, "
            "finished_at = excluded.finished_at, duration_s = excluded.duration_s",
            (
                run_id,
                context_id,
                call_id,
                turn,
                tool,
                argument_hash,
                started.isoformat(),
                finished.isoformat(),
                duration_s,
            ),
        )

    def tool_committed(
        self,
        *,
        run_id: str,
        context_id: str,
        call_id: str,
        turn: int,
        tool: str,
        argument_hash: str,
        result_hash: str,
        status: str,
        error_kind: str | None,
    ) -> None:
        """The result that entered canonical history (authoritative for the result hash and outcome)."""
        self._write(
            "INSERT INTO tool_executions (run_id, context_id, call_id, turn, tool, argument_hash, result_hash, status, "
            "error_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, call_id) DO UPDATE SET result_hash = excluded.result_hash, "
            "status = excluded.status, error_kind = excluded.error_kind",
            (run_id, context_id, call_id, turn, tool, argument_hash, result_hash, status, error_kind),
        )

    def tool_executions(self, run_id: str) -> list[ToolExecutionRecord]:
        rows = self._rows("SELECT * FROM tool_executions WHERE run_id = ? ORDER BY turn, rowid", (run_id,))
        return [ToolExecutionRecord(**dict(row)) for row in rows]

    def context_executions(self, context_id: str) -> list[ToolExecutionRecord]:
        rows = self._rows("SELECT * FROM tool_executions WHERE context_id = ? ORDER BY rowid", (context_id,))
        return [ToolExecutionRecord(**dict(row)) for row in rows]

    def has_call(self, context_id: str, call_id: str) -> bool:
        rows = self._rows("SELECT 1 FROM tool_executions WHERE context_id = ? AND call_id = ?", (context_id, call_id))
        return bool(rows)

    # -- derivations --------------------------------------------------------
    def derivation(self, *, run_id: str, call_id: str, sha256: str, name: str, media_type: str | None) -> None:
        self._write(
            "INSERT INTO derivations (run_id, call_id, sha256, name, media_type, recorded_at) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (run_id, call_id, sha256) DO NOTHING",
            (run_id, call_id, sha256, name, media_type, now()),
        )

    def derivations(self, run_id: str) -> list[Derivation]:
        rows = self._rows("SELECT * FROM derivations WHERE run_id = ? ORDER BY rowid", (run_id,))
        return [Derivation(**dict(row)) for row in rows]

    # -- claims -------------------------------------------------------------
    def add_claim(
        self, *, context_id: str, run_id: str, call_id: str | None, statement: str, evidence: tuple[EvidenceRef, ...]
    ) -> Claim:
        claim = Claim(
            claim_id=f"claim-{uuid.uuid4().hex[:12]}",
            context_id=context_id,
            run_id=run_id,
            call_id=call_id,
            statement=statement,
            evidence=evidence,
            created_at=now(),
        )
        payload = [
            {"origin": e.origin.value, "reference": e.reference, "relation": e.relation.value, "note": e.note}
            for e in evidence
        ]
        self._write(
            "INSERT INTO claims (claim_id, context_id, run_id, call_id, statement, evidence, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (claim.claim_id, context_id, run_id, call_id, statement, json.dumps(payload), claim.created_at),
        )
        return claim

    def claims(self, *, context_id: str | None = None, run_id: str | None = None) -> list[Claim]:
        column, value = ("run_id", run_id) if run_id is not None else ("context_id", context_id)
        rows = self._rows(f"SELECT * FROM claims WHERE {column} = ? ORDER BY created_at, rowid", (value,))
        return [_claim(row) for row in rows]

    # -- reviews ------------------------------------------------------------
    def log_review(self, record: ReviewRecord) -> None:
        findings = [attrs.asdict(finding) for finding in record.findings]
        self._write(
            "INSERT INTO reviews (review_id, context_id, run_id, call_id, objective, level, decision, findings, "
            "summary, evidence_digest, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.review_id,
                record.context_id,
                record.run_id,
                record.call_id,
                record.objective,
                record.level.value,
                record.decision.value,
                json.dumps(findings),
                record.summary,
                record.evidence_digest,
                record.error,
                record.created_at,
            ),
        )

    def reviews(self, context_id: str) -> list[ReviewRecord]:
        rows = self._rows("SELECT * FROM reviews WHERE context_id = ? ORDER BY created_at, rowid", (context_id,))
        return [_review(row) for row in rows]


def _claim(row: sqlite3.Row) -> Claim:
    evidence = tuple(
        EvidenceRef(EvidenceOrigin(e["origin"]), e["reference"], EvidenceRelation(e["relation"]), e["note"])
        for e in json.loads(row["evidence"])
    )
    return Claim(**{**dict(row), "evidence": evidence})


def _review(row: sqlite3.Row) -> ReviewRecord:
    data = dict(row)
    data["level"] = ReviewLevel(data["level"])
    data["decision"] = ReviewDecision(data["decision"])
    data["findings"] = tuple(ReviewFinding(**f) for f in json.loads(data["findings"]))
    return ReviewRecord(**data)


_OPEN: dict[Path, ProvenanceStore] = {}
_OPEN_LOCK = threading.Lock()


def open_store(data_dir: Path) -> ProvenanceStore:
    """The process-wide store of ``data_dir`` (opened once, shared by the sink, observer and tools)."""
    path = (Path(data_dir) / FILENAME).resolve()
    with _OPEN_LOCK:
        store = _OPEN.get(path)
        if store is None:
            store = _OPEN[path] = ProvenanceStore(path)
        return store
