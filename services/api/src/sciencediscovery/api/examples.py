"""``sciencediscovery examples export``: the spec's reproducible context-assembly examples.

Each example is a real in-process run through the composition root (the same
Platform and Composer as ``sciencediscovery run``); only the model transport is
scripted, and a recorder keeps the exact ``ModelInput`` of every call. Output
is deterministic except run ids and the export timestamp.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.model import RecordingModelClient
from sciencediscovery.runtime_core import ModelInput
from sciencediscovery.runtime_core.serialization import to_json

from .bootstrap.platform import Platform
from .settings import ServiceSettings

GENERATED_BY = "AgentLoop -> ContextAssembler -> ProviderModelClient recorder"
SUMMARY_PURPOSE = "checkpoint_summary"

LITERATURE_REVIEW = {
    "objective": "Review current evidence about TP53 resistance mechanisms",
    "constraints": ["Use selected literature skill", "Do not execute ungoverned tools"],
    "outputRequirements": ["Cited summary", "State uncertainty"],
}
METHOD_COMPARISON = {
    "objective": "Compare two supplied assay methods",
    "constraints": ["Read-only analysis", "Return a bounded brief"],
    "outputRequirements": ["Method comparison table", "Limitations"],
}
EVIDENCE_CHECK = {
    "objective": "Review a locked report against its cited evidence",
    "constraints": ["Do not alter the artifact", "Report unsupported claims"],
    "outputRequirements": ["JSON findings", "Explicit confidence"],
}

SKILL = """---
name: literature-review
description: Systematic literature review
version: "1.0.0"
---
# Systematic literature review

1. Search PubMed and preprint servers with explicit inclusion criteria.
2. Screen titles and abstracts; record every exclusion reason.
3. Synthesize findings per mechanism; cite every claim and state uncertainty.
"""

MAIN_TOOLS = ["read_skill", "update_plan", "tool_search", "read_tool_output", "list_files", "read_file", "mcp__*"]
BIOMEDICAL_TOOL = "mcp__biomedical__search_articles"

MAIN_SCRIPT = {
    "turns": [
        {
            "content": "",
            "tool_calls": [{"id": "call-1", "name": "read_skill", "arguments": {"name": "literature-review"}}],
        },
        {
            "content": "",
            "tool_calls": [
                {
                    "id": "call-2",
                    "name": "update_plan",
                    "arguments": {
                        "explanation": "TP53 resistance evidence review",
                        "items": [
                            {"step": "search", "status": "in_progress"},
                            {"step": "screen", "status": "pending"},
                            {"step": "synthesize", "status": "pending"},
                        ],
                    },
                }
            ],
        },
        {
            "content": "",
            "tool_calls": [
                {"id": "call-3", "name": "tool_search", "arguments": {"query": f"select:{BIOMEDICAL_TOOL}"}}
            ],
        },
        {
            "content": "TP53 loss-of-function and gain-of-function mutants both contribute to therapy resistance "
            "[example-source-1]; the evidence for MDM2 amplification is weaker (uncertain)."
        },
    ]
}
SUBAGENT_SCRIPT = {
    "turns": [
        {"content": "", "tool_calls": [{"id": "call-1", "name": "list_files", "arguments": {"path": "workspace"}}]},
        {
            "content": "",
            "tool_calls": [{"id": "call-2", "name": "read_file", "arguments": {"path": "workspace/methods.md"}}],
        },
        {"content": "| method | sensitivity |\n| A | high |\n| B | moderate |\nLimitations: two runs only."},
    ]
}
REVIEWER_SCRIPT = {
    "turns": [
        {
            "content": '{"decision": "REVISE_AND_RETRY", "findings": [{"message": "claim 2 cites no source", '
            '"severity": "major"}], "confidence": "medium", "summary": "one unsupported claim"}'
        }
    ]
}


BIOMEDICAL_SERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("biomedical")


@server.tool()
def search_articles(query: str) -> str:
    \"\"\"Search a biomedical literature catalogue by keyword.\"\"\"
    return f"3 articles about {query} (example catalogue)"


if __name__ == "__main__":
    server.run("stdio")
"""


def biomedical_sources(scratch: Path) -> str:
    """The sources file of a real MCP server (stdio, the official SDK) holding the deferred biomedical tool."""
    script = scratch / "biomedical_server.py"
    script.write_text(BIOMEDICAL_SERVER)
    config = scratch / "sources.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "biomedical": {
                        "command": sys.executable,
                        "args": [str(script)],
                        "description": "Biomedical literature catalogue",
                    }
                }
            }
        )
    )
    return str(config)


class RecordingPlatform(Platform):
    """The production Platform with a recorder around every model client it builds."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.recorders: list[RecordingModelClient] = []
        super().__init__(settings)

    def model_client(self, spec: str) -> Any:
        recorder = RecordingModelClient(super().model_client(spec))
        self.recorders.append(recorder)
        return recorder

    def turn_inputs(self) -> list[ModelInput]:
        """Every recorded model input except checkpoint-summary requests, in call order."""
        return [i for r in self.recorders for i in r.inputs if i.metadata.get("purpose") != SUMMARY_PURPOSE]


def _document(
    mode: str, scope: str, structured: Mapping[str, Any], model_input: ModelInput, run_id: str
) -> dict[str, Any]:
    data = to_json(model_input)
    return {
        "generatedBy": GENERATED_BY,
        "mode": mode,
        "scope": scope,
        "structuredInput": dict(structured),
        "llmInput": {"systemPrompt": data["system_prompt"], "history": data["messages"], "tools": data["tools"]},
        "runId": run_id,
        "exportedAt": datetime.datetime.now(datetime.UTC).isoformat(),
    }


def _write(path: Path, document: Mapping[str, Any]) -> Path:
    """Example files hold complete model inputs: written privately (0600)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(document, handle, ensure_ascii=False, indent=2)
        handle.write("\n")
    os.chmod(path, 0o600)
    return path


async def _run(
    scratch: Path,
    name: str,
    *,
    mode: str,
    scope: str,
    structured: Mapping[str, Any],
    script: Mapping[str, Any],
    profiles: Mapping[str, Any],
    sources: str | None = None,
    skills: bool = False,
    workspace: Path | None = None,
) -> tuple[RecordingPlatform, str]:
    script_path = scratch / f"{name}.json"
    script_path.write_text(json.dumps(script))
    environ = {"SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello", "SCIENCE_AGENT_PERMISSION_DEFAULT": "allow"}
    if sources is not None:
        environ["SCIENCE_AGENT_SOURCES_FILE"] = sources
    settings = ServiceSettings(
        data_dir=Path(tempfile.mkdtemp(prefix=f"data-{name}-", dir=scratch)),
        mode=mode,
        scope=scope,
        model=f"scripted:{script_path}",
        skill_dirs=(scratch / "skills",) if skills else (),
        workspace=workspace,
        max_turns=8,
        profiles=profiles,
        environ=environ,
    )
    platform = RecordingPlatform(settings)
    try:
        if platform.broker is not None:
            for server in platform.sources.servers:  # the example's operator approves the server's tool list
                await platform.broker.approve(server)
        summary = await platform.run_new(structured)
    finally:
        platform.close()
    if summary.status != "completed":
        raise RuntimeError(f"example {name!r} ended {summary.status}: {summary.reason}")
    return platform, summary.run_id


async def export(directory: Path) -> list[Path]:
    """Run the three scenarios and write every example file into ``directory``; returns the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    # a fixed scratch location: its paths appear in the prompts (the workspace mount), so a random
    # temporary name would make the output differ between exports
    scratch = Path(tempfile.gettempdir()) / f"sciencediscovery-examples-{os.getuid()}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(mode=0o700)
    try:
        (scratch / "skills" / "literature-review").mkdir(parents=True)
        (scratch / "skills" / "literature-review" / "SKILL.md").write_text(SKILL)
        workspace = scratch / "workspace"
        workspace.mkdir()
        (workspace / "methods.md").write_text("# Assay A\nSensitive, slow.\n\n# Assay B\nFast, less sensitive.\n")

        main_profiles = {"main": {"tools": MAIN_TOOLS}}
        runs = {}
        for mode in ("dynamic", "legacy"):
            runs[mode] = await _run(
                scratch,
                f"main-{mode}",
                mode=mode,
                scope="main",
                structured=LITERATURE_REVIEW,
                script=MAIN_SCRIPT,
                profiles=main_profiles,
                sources=biomedical_sources(scratch),
                skills=True,
            )
            platform, run_id = runs[mode]
            for turn, model_input in enumerate(platform.turn_inputs(), start=1):
                document = _document(mode, "main", LITERATURE_REVIEW, model_input, run_id)
                written.append(_write(directory / f"main-literature-review-{mode}-turn-{turn}.json", document))
        platform, run_id = runs["dynamic"]
        final = _document("dynamic", "main", LITERATURE_REVIEW, platform.turn_inputs()[-1], run_id)
        final["turns"] = [to_json(i) for i in platform.turn_inputs()]
        written.append(_write(directory / "main-literature-review.json", final))

        platform, run_id = await _run(
            scratch,
            "subagent",
            mode="shadow",
            scope="subagent",
            structured=METHOD_COMPARISON,
            script=SUBAGENT_SCRIPT,
            profiles={"subagent": {"tools": ["list_files", "read_file"]}},
            workspace=workspace,
        )
        document = _document("shadow", "subagent", METHOD_COMPARISON, platform.turn_inputs()[0], run_id)
        written.append(_write(directory / "subagent-method-comparison.json", document))

        platform, run_id = await _run(
            scratch,
            "reviewer",
            mode="dynamic",
            scope="reviewer",
            structured=EVIDENCE_CHECK,
            script=REVIEWER_SCRIPT,
            profiles={},
        )
        document = _document("dynamic", "reviewer", EVIDENCE_CHECK, platform.turn_inputs()[0], run_id)
        written.append(_write(directory / "reviewer-evidence-check.json", document))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return written
