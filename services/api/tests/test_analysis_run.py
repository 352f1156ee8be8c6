"""A scripted run through the service analyses a CSV in the workspace in the sandbox: the figure becomes an
artifact, and the provenance record of the execution names its environment revision."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

from sciencediscovery.api.bootstrap.platform import Platform
from sciencediscovery.api.settings import ServiceSettings
from sciencediscovery.artifact_manager import open_store
from sciencediscovery.provenance.settings import store_for

ANALYSIS = """
import csv, os, statistics
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open('/workspace/workspace/measurements.csv')))
dose = [float(r['dose']) for r in rows]
response = [float(r['response']) for r in rows]
print(f"slope={statistics.linear_regression(dose, response).slope:.3f}")
fig, ax = plt.subplots()
ax.scatter(dose, response)
fig.savefig(os.path.join(os.environ['SCIENCEDISCOVERY_OUTPUT_DIR'], 'dose_response.png'))
"""


def test_csv_analysis_produces_a_figure_artifact_and_a_provenance_record(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with (workspace / "measurements.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["dose", "response"])
        writer.writerows([(d, 3 * d + 2) for d in range(1, 11)])
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"id": "analysis", "name": "run_code", "arguments": {"code": ANALYSIS}}]},
                    {"content": "The dose-response slope is 3.000 (see dose_response.png)."},
                ]
            }
        )
    )
    settings = ServiceSettings.load(
        data_dir=tmp_path / "data",
        model=f"scripted:{script}",
        workspace=workspace,
        environ={"SCIENCE_AGENT_PERMISSION_ALLOW": "run_code(*)", "SCIENCEDISCOVERY_DISABLE_PLUGINS": "hello"},
    )
    platform = Platform(settings)
    summary = asyncio.run(platform.run_new({"objective": "Fit the dose-response data"}))
    assert summary.status == "completed", summary.reason

    history = platform.store.load_history(summary.context_id)
    [result] = [m for m in history if m.tool_call_id == "analysis"]
    assert result.status.value == "ok", result.content
    assert "slope=3.000" in result.content
    revision = result.metadata["environment_revision"]
    assert revision.startswith("env-")
    assert platform.permissions.epoch.environment_revision == revision  # the epoch names the same environment
    assert revision in platform.governance_summary()["code execution"]
    assert result.metadata["permission_epoch"]

    figures = [
        a for a in open_store(settings.data_dir).artifacts(context_id=summary.context_id) if a.kind.value == "figure"
    ]
    assert [f.name for f in figures] == ["dose_response.png"]
    assert figures[0].media_type == "image/png"

    provenance = store_for({"data_dir": str(settings.data_dir)})
    [execution] = [r for r in provenance.tool_executions(summary.run_id) if r.call_id == "analysis"]
    assert execution.environment_revision == revision
    assert execution.action == "code"
    assert execution.permission_epoch == result.metadata["permission_epoch"]
    derived = {d.sha256 for d in provenance.derivations(summary.run_id) if d.call_id == "analysis"}
    assert figures[0].sha256 in derived

    records = platform.service_parts()
    assert [a["name"] for a in records.artifacts(summary.context_id) if a["kind"] == "figure"] == ["dose_response.png"]
    exported = records.provenance(summary.context_id)
    assert summary.run_id in exported["runs"]
    assert any(e["environment_revision"] == revision for e in exported["executions"])
