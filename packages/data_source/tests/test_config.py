"""Source configuration is validated at load; errors name the file or key and the entry."""

from __future__ import annotations

import json
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciencediscovery.data_source import (
    CONFIG_VARIABLE,
    HttpServer,
    SourceConfigError,
    StdioServer,
    sources_from_data,
    sources_from_file,
    sources_from_settings,
)


def test_stdio_and_http_servers_and_web_sources_load():
    config = sources_from_data(
        {
            "mcpServers": {
                "pubmed": {"command": "uvx", "args": ["pubmed-mcp", "--db", "my db"], "env": {"A": "1"}, "cwd": "/srv"},
                "remote": {
                    "url": "https://mcp.example.org/mcp",
                    "headers": {"Authorization": {"secret": "TOKEN", "prefix": "Bearer "}},
                },
            },
            "webSources": {"ncbi": {"url": "https://www.ncbi.nlm.nih.gov", "description": "NCBI"}},
        },
        "sources.json",
    )
    pubmed = config.servers["pubmed"]
    assert isinstance(pubmed, StdioServer) and pubmed.command_line == "uvx pubmed-mcp --db 'my db'"
    assert pubmed.permission_specifier == "server:pubmed command:uvx pubmed-mcp --db 'my db' cwd:/srv env:A=1"
    remote = config.servers["remote"]
    assert (
        isinstance(remote, HttpServer)
        and remote.permission_specifier == "server:remote url:https://mcp.example.org/mcp"
    )
    assert remote.headers["Authorization"].resolve({"TOKEN": "t0k"}, "x") == "Bearer t0k"
    assert "t0k" not in repr(config)
    assert config.web_sources["ncbi"].url == "https://www.ncbi.nlm.nih.gov"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"mcpServers": {"a": {"args": []}}}, "mcpServers.a"),
        ({"mcpServers": {"a": {"command": "x", "args": "--flag"}}}, "mcpServers.a.args"),
        ({"mcpServers": {"a": {"command": ""}}}, "mcpServers.a.command"),
        ({"mcpServers": {"a": {"command": "x", "timeout_s": 0}}}, "mcpServers.a.timeout_s"),
        ({"mcpServers": {"a": {"command": "x", "colour": "red"}}}, "mcpServers.a.colour"),
        ({"mcpServers": {"a__b": {"command": "x"}}}, "mcpServers.a__b"),
        ({"mcpServers": {"a b": {"command": "x"}}}, "mcpServers.a b"),
        ({"mcpServers": {"r": {"url": "ftp://x"}}}, "mcpServers.r.url"),
        (
            {"mcpServers": {"r": {"url": "https://x", "headers": {"Authorization": "Bearer plain"}}}},
            "mcpServers.r.headers.Authorization",
        ),
        ({"webSources": {"w": {"description": "no url"}}}, "webSources.w"),
        ({"servers": {}}, "sources.servers"),
    ],
)
def test_invalid_configuration_names_the_entry(data, field):
    with pytest.raises(SourceConfigError) as error:
        sources_from_data(data, "sources.json")
    assert error.value.where == "sources.json" and error.value.field == field
    assert str(error.value).startswith(f"sources.json: {field}:")


def test_missing_secret_is_named_not_guessed():
    config = sources_from_data(
        {"mcpServers": {"r": {"url": "https://x", "headers": {"X-Key": {"secret": "API_KEY"}}}}}, "f"
    )
    with pytest.raises(SourceConfigError, match="secret API_KEY"):
        config.servers["r"].headers["X-Key"].resolve({}, "mcpServers.r")


def test_sources_from_file_and_settings(tmp_path):
    path = tmp_path / "sources.json"
    path.write_text(json.dumps({"mcpServers": {"fs": {"command": "node", "args": ["fs.js"]}}}))
    assert list(sources_from_settings({}, {CONFIG_VARIABLE: str(path)}).servers) == ["fs"]
    assert sources_from_settings({"data_sources": {"webSources": {}}}, {CONFIG_VARIABLE: str(path)}).servers == {}
    assert sources_from_settings({}, {}).servers == {}
    path.write_text("{broken")
    with pytest.raises(SourceConfigError, match=r"sources.json: line 1"):
        sources_from_file(path)
    with pytest.raises(SourceConfigError, match="cannot be read"):
        sources_from_file(tmp_path / "missing.json")


def test_the_permission_specifier_names_the_environment():
    def server(env):
        body = {"command": "python3", "args": ["-m", "chem_server"], **({"env": env} if env else {})}
        return sources_from_data({"mcpServers": {"chem": body}}, "sources.json").servers["chem"]

    clean = server({})
    hostile = server({"PYTHONPATH": "/tmp/attacker", "LD_PRELOAD": "/tmp/attacker/evil.so", "NOTE": "a b'c"})
    assert clean.permission_specifier == "server:chem command:python3 -m chem_server"
    assert hostile.permission_specifier == (
        "server:chem command:python3 -m chem_server env:LD_PRELOAD=/tmp/attacker/evil.so "
        + shlex.quote("NOTE=a b'c")
        + " PYTHONPATH=/tmp/attacker"
    )
    assert shlex.split(hostile.permission_specifier.split(" env:", 1)[1]) == [
        "LD_PRELOAD=/tmp/attacker/evil.so",
        "NOTE=a b'c",
        "PYTHONPATH=/tmp/attacker",
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20),
        max_size=6,
    )
)
def test_the_shown_command_line_reads_back_to_the_exact_argv(args):
    server = StdioServer(name="s", command="node", args=tuple(args))
    assert shlex.split(server.command_line) == ["node", *args]
    assert server.permission_specifier == f"server:s command:{server.command_line}"
