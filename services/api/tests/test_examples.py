"""`sciencediscovery examples export` regenerates the spec's example files through the real path."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest

from sciencediscovery.api.examples import BIOMEDICAL_TOOL, export

EXPECTED = {
    "main-literature-review.json",
    *(f"main-literature-review-{mode}-turn-{turn}.json" for mode in ("legacy", "dynamic") for turn in (1, 2, 3, 4)),
    "subagent-method-comparison.json",
    "reviewer-evidence-check.json",
}
WRAPPER = "<runtime_context_data"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("examples")
    paths = asyncio.run(export(folder))
    assert {p.name for p in paths} == EXPECTED
    return folder


def load(folder: Path, name: str) -> dict:
    return json.loads((folder / name).read_text())


def texts(document: dict) -> list[str]:
    return [m["content"] for m in document["llmInput"]["history"]]


def tools(document: dict) -> list[str]:
    return [t["name"] for t in document["llmInput"]["tools"]]


def test_every_file_has_the_documented_shape_and_is_private(exported):
    for name in EXPECTED:
        document = load(exported, name)
        assert document["generatedBy"] == "AgentLoop -> ContextAssembler -> ProviderModelClient recorder"
        assert set(document["llmInput"]) == {"systemPrompt", "history", "tools"}
        assert document["structuredInput"]["objective"]
        assert stat.S_IMODE(os.stat(exported / name).st_mode) == 0o600


def test_main_dynamic_turns_follow_the_spec(exported):
    turns = [load(exported, f"main-literature-review-dynamic-turn-{n}.json") for n in (1, 2, 3, 4)]
    body = "Screen titles and abstracts; record every exclusion reason."
    # turn 1: the Skill catalog, not its body
    assert "literature-review: Systematic literature review" in turns[0]["llmInput"]["systemPrompt"]
    assert all(body not in t["llmInput"]["systemPrompt"] for t in turns)
    assert not any(WRAPPER in text for text in texts(turns[0]))
    # turn 2: one read_skill result and the active_skills data message
    assert sum(body in text for text in texts(turns[1])) == 1
    [skills] = [text for text in texts(turns[1]) if 'channel="active_skills"' in text]
    assert '"instructionsVisibleInHistory":true' in skills.replace(" ", "")
    # turn 3: the protected plan section
    assert "TP53 resistance evidence review" in turns[2]["llmInput"]["systemPrompt"]
    assert "TP53 resistance evidence review" not in turns[1]["llmInput"]["systemPrompt"]
    # the deferred MCP tool only after tool_search
    assert [BIOMEDICAL_TOOL in tools(t) for t in turns] == [False, False, False, True]
    for turn in turns:
        assert sum(body in text for text in texts(turn)) <= 1


def test_legacy_has_the_same_canonical_history_without_projections(exported):
    for n in (1, 2, 3, 4):
        legacy = load(exported, f"main-literature-review-legacy-turn-{n}.json")
        dynamic = load(exported, f"main-literature-review-dynamic-turn-{n}.json")
        assert not any(WRAPPER in text for text in texts(legacy))
        assert texts(legacy) == [text for text in texts(dynamic) if not text.startswith(WRAPPER)]
        assert tools(legacy) == tools(dynamic)
        assert "TP53 resistance evidence review" not in legacy["llmInput"]["systemPrompt"]


def test_subagent_shadow_sends_the_legacy_input(exported):
    document = load(exported, "subagent-method-comparison.json")
    assert (document["mode"], document["scope"]) == ("shadow", "subagent")
    assert tools(document) == ["list_files", "read_file"]
    assert "ScienceDiscovery subagent" in document["llmInput"]["systemPrompt"]
    assert not any(WRAPPER in text for text in texts(document))


def test_reviewer_has_identity_contract_and_no_tools(exported):
    document = load(exported, "reviewer-evidence-check.json")
    assert (document["mode"], document["scope"]) == ("dynamic", "reviewer")
    assert tools(document) == []
    prompt = document["llmInput"]["systemPrompt"]
    assert "ScienceDiscovery reviewer" in prompt
    assert "Review a locked report against its cited evidence" in prompt


def test_export_is_deterministic_except_ids_and_timestamps(exported, tmp_path):
    again = asyncio.run(export(tmp_path))
    volatile = {"runId", "exportedAt"}
    for path in again:
        first, second = load(exported, path.name), load(tmp_path, path.name)
        strip = lambda d: {k: v for k, v in d.items() if k not in volatile}  # noqa: E731
        first_text = json.dumps(strip(first), sort_keys=True)
        second_text = json.dumps(strip(second), sort_keys=True)
        assert first_text.replace(first["runId"], "RUN") == second_text.replace(second["runId"], "RUN"), path.name
