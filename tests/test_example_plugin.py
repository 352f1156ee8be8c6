"""Installing a third-party distribution is the whole configuration: its entry point adds its tool."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import json
from sciencediscovery.runtime_core import list_plugins, make_plugin_manager
manager = make_plugin_manager()
tools = []
manager.hook.register_tools(register=tools.append, settings={})
print(json.dumps({"tools": [t.name for t in tools],
                  "plugins": {p.name: p.distribution for p in list_plugins(manager)}}))
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is required to build the fresh environment (nox installs it)")
    folder = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(folder)], check=True)
    return folder


def uv_pip(venv: Path, *args: str) -> None:
    subprocess.run(
        [shutil.which("uv") or "uv", "pip", *args, "--quiet", "--python", str(venv / "bin" / "python")],
        check=True,
        cwd=ROOT,
    )


def probe(venv: Path) -> dict:
    output = subprocess.run([str(venv / "bin" / "python"), "-c", PROBE], check=True, capture_output=True, text=True)
    return json.loads(output.stdout)


def test_installing_and_uninstalling_the_example_plugin(venv: Path) -> None:
    uv_pip(venv, "install", "packages/runtime_core", "packages/tools")
    before = probe(venv)
    assert "hello" not in before["tools"]

    uv_pip(venv, "install", "examples/plugins/hello", "packages/runtime_core", "packages/tools")
    after = probe(venv)
    assert "hello" in after["tools"]
    assert after["plugins"]["hello"] == "sciencediscovery-hello"

    uv_pip(venv, "uninstall", "sciencediscovery-hello")
    assert "hello" not in probe(venv)["tools"]


def test_runtime_core_alone_pulls_in_no_other_sciencediscovery_distribution(tmp_path: Path) -> None:
    folder = tmp_path / "core-only"
    subprocess.run([shutil.which("uv") or "uv", "venv", "--quiet", "--python", sys.executable, str(folder)], check=True)
    uv_pip(folder, "install", "packages/runtime_core")
    listed = subprocess.run(
        [shutil.which("uv") or "uv", "pip", "list", "--format", "json", "--python", str(folder / "bin" / "python")],
        check=True,
        capture_output=True,
        text=True,
    )
    names = {entry["name"] for entry in json.loads(listed.stdout)}
    assert [n for n in names if n.startswith("sciencediscovery")] == ["sciencediscovery-runtime-core"]
    subprocess.run([str(folder / "bin" / "python"), "-c", "import sciencediscovery.runtime_core"], check=True)
