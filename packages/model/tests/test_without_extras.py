"""Without the SDK extras the package still imports and runs the scripted provider (in a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import asyncio, json, sys

    class WithoutSdks:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"openai", "anthropic"}:
                raise ImportError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, WithoutSdks())

    from sciencediscovery.model import MissingExtraError, ProviderModelClient
    from sciencediscovery.model import plugin
    from sciencediscovery.runtime_core import CollectingSink, ExternalWaits, Message, ModelInput, TurnContext
    from sciencediscovery.runtime_core import make_plugin_manager

    manager = make_plugin_manager(load_entry_points=False, plugins=[plugin])
    client = ProviderModelClient.from_spec("scripted:" + sys.argv[1], plugin_manager=manager, environ={})
    sink = CollectingSink()
    context = TurnContext("r", "c", 1, sink, ExternalWaits("r", "c", sink.emit))
    answer = asyncio.run(client.complete(ModelInput("s", [Message.user("hi")]), context)).message.content
    missing = {}
    specs = {"openai:gpt-4o": {"OPENAI_API_KEY": "k"}, "anthropic:claude-sonnet-4-6": {"ANTHROPIC_API_KEY": "k"}}
    for spec, env in specs.items():
        try:
            ProviderModelClient.from_spec(spec, plugin_manager=manager, environ=env)
        except MissingExtraError as error:
            missing[spec] = error.pip_command
    loaded = sorted({"openai", "anthropic"} & set(sys.modules))
    print(json.dumps({"answer": answer, "missing": missing, "loaded": loaded}))
    """
)


def test_scripted_runs_and_http_providers_name_their_extra_when_sdks_are_absent(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"content": "offline answer"}]}))

    completed = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(script)], capture_output=True, text=True, timeout=120, check=False
    )

    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result == {
        "answer": "offline answer",
        "missing": {
            "openai:gpt-4o": "pip install 'sciencediscovery-model[openai]'",
            "anthropic:claude-sonnet-4-6": "pip install 'sciencediscovery-model[anthropic]'",
        },
        "loaded": [],
    }
