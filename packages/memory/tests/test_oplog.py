"""The structlog operational logging adapter."""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from sciencediscovery.memory import StructlogEventSink, configure_logging, get_logger
from sciencediscovery.runtime_core import ToolCall
from sciencediscovery.runtime_core.testing import reply


def test_run_events_become_json_lines_without_content(settings, run_kernel) -> None:
    stream = io.StringIO()
    configure_logging(json=True, stream=stream)
    script = [
        reply("", ToolCall("w1", "memory_write", {"entity": "TP53", "observation": "SECRET-FINDING"})),
        reply("SECRET-ANSWER"),
    ]
    run = asyncio.run(run_kernel(settings, script, sinks=[StructlogEventSink()], prompt="SECRET-PROMPT"))
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    kinds = [line["event"] for line in lines]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert {"turn_started", "model_output", "tool_started", "tool_finished"} <= set(kinds)
    finished = next(line for line in lines if line["event"] == "tool_finished")
    assert (finished["tool"], finished["status"], finished["run_id"]) == ("memory_write", "ok", run.result.run_id)
    assert all(line["level"] == "info" and line["component"] == "runtime" and "timestamp" in line for line in lines)
    assert "SECRET" not in stream.getvalue()


def test_level_filters_and_console_mode() -> None:
    stream = io.StringIO()
    configure_logging(json=False, level="warning", stream=stream)
    logger = get_logger("store")
    logger.info("hidden")
    logger.warning("shown", path="/data")
    assert "hidden" not in stream.getvalue()
    assert "shown" in stream.getvalue() and "path=/data" in stream.getvalue()


def test_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="level"):
        configure_logging(level="loud")
