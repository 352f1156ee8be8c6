"""The ``sciencediscovery`` command line. Errors print one line and exit non-zero, never a traceback."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import attrs
import click
from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


def wide_console() -> Console:
    """Tables are never wrapped narrower than 160 columns (names stay greppable when piped)."""
    console = Console()
    return Console(width=max(console.width, 160))


def one_line_errors(function: F) -> F:
    """Turn any expected failure into ``error: <message>`` and exit status 2."""

    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except click.ClickException:
            raise
        except (KeyboardInterrupt, click.Abort):
            click.echo("error: interrupted", err=True)
            sys.exit(130)
        except Exception as error:
            message = " ".join(str(error).split()) or type(error).__name__
            click.echo(f"error: {message}", err=True)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


@click.group()
@click.version_option(package_name="sciencediscovery-api")
def main() -> None:
    """ScienceDiscovery: governed, observable scientific agent runs."""


def _print_summary(summary: Any, as_json: bool) -> None:
    data = attrs.asdict(summary)
    if as_json:
        click.echo(json.dumps(data))
        return
    click.echo(f"status:     {summary.status} ({summary.reason})")
    click.echo(f"context id: {summary.context_id}   run: {summary.run_id}   turns: {summary.turns}")
    if summary.trace_dir:
        click.echo(f"traces:     {summary.trace_dir}")
    click.echo("")
    click.echo(summary.final_answer or "(no final answer)")


@main.command()
@click.option("--objective", required=True, help="What the run must achieve.")
@click.option("--constraint", "constraints", multiple=True, help="A constraint (repeatable).")
@click.option("--output-requirement", "output_requirements", multiple=True, help="An output requirement (repeatable).")
@click.option("--model", required=True, help="Model spec: openai:<model>, anthropic:<model> or scripted:<file>.")
@click.option("--mode", type=click.Choice(["dynamic", "shadow", "legacy"]), default=None)
@click.option("--scope", type=click.Choice(["main", "subagent", "reviewer"]), default="main")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None)
@click.option("--trace-dir", type=click.Path(file_okay=False), default=None, help="Write context traces here.")
@click.option("--skills", "skill_dirs", multiple=True, type=click.Path(), help="A Skills directory (repeatable).")
@click.option("--workspace", type=click.Path(), default=None, help="Directory mounted read-write as the workspace.")
@click.option("--max-turns", type=click.IntRange(min=1), default=None)
@click.option("--profiles", type=click.Path(), default=None, help="TOML/JSON run profiles (identity, tools, turns).")
@click.option("--context-id", default=None, help="Use this context id instead of a generated one.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@one_line_errors
def run(**options: Any) -> None:
    """Run one agent to its terminal result and print it."""
    from .bootstrap.platform import Platform

    as_json = options.pop("as_json")
    platform = Platform.from_options(**{k: options[k] for k in _PLATFORM_OPTIONS})
    structured = {
        "objective": options["objective"],
        "constraints": list(options["constraints"]),
        "outputRequirements": list(options["output_requirements"]),
    }
    try:
        summary = asyncio.run(
            platform.run_new(structured, context_id=options["context_id"], progress=not as_json, notices=True)
        )
    finally:
        platform.close()
    _print_summary(summary, as_json)


_PLATFORM_OPTIONS = (
    "model",
    "mode",
    "scope",
    "data_dir",
    "trace_dir",
    "skill_dirs",
    "workspace",
    "max_turns",
    "profiles",
)


@main.command()
@click.argument("context_id")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@one_line_errors
def resume(context_id: str, data_dir: str | None, as_json: bool) -> None:
    """Continue an interrupted run from its last committed step to its terminal result."""
    from .bootstrap.platform import Platform

    platform = Platform.for_session(context_id, data_dir=data_dir)
    try:
        summary = asyncio.run(platform.resume(context_id, progress=not as_json, notices=True))
    finally:
        platform.close()
    _print_summary(summary, as_json)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option("--data-dir", type=click.Path(file_okay=False), default=None)
@click.option(
    "--token", default=None, envvar="SCIENCEDISCOVERY_API_TOKEN", help="Bearer token (required off loopback)."
)
@one_line_errors
def serve(host: str, port: int, data_dir: str | None, token: str | None) -> None:
    """Serve the HTTP/SSE API (binds 127.0.0.1 unless told otherwise)."""
    from .bootstrap.platform import Platform
    from .serve import serve_forever

    platform = Platform.from_options(data_dir=data_dir)
    try:
        serve_forever(platform, host=host, port=port, token=token)
    finally:
        platform.close()


@main.group()
def examples() -> None:
    """The spec's reproducible context-assembly examples."""


@examples.command("export")
@click.option("--dir", "directory", required=True, type=click.Path(file_okay=False))
@one_line_errors
def export_examples(directory: str) -> None:
    """Write the example JSON files into DIR."""
    from .examples import export

    for path in asyncio.run(export(Path(directory))):
        click.echo(str(path))


@main.group()
def trace() -> None:
    """Context traces."""


@trace.command("show")
@click.argument("path", type=click.Path())
@one_line_errors
def show_trace(path: str) -> None:
    """Summarise a trace file: budget use per section, compaction, window."""
    from .trace_view import render_trace

    render_trace(Path(path), wide_console())


@main.group()
def plugins() -> None:
    """Installed plugins."""


@plugins.command("list")
@one_line_errors
def list_plugins_command() -> None:
    """Show each installed plugin, its distribution and hooks."""
    from rich.table import Table

    from sciencediscovery.runtime_core import list_plugins, make_plugin_manager

    table = Table("plugin", "distribution", "version", "hooks")
    for info in list_plugins(make_plugin_manager()):
        table.add_row(info.name, info.distribution or "", info.version or "", ", ".join(info.hooks))
    wide_console().print(table)


@main.group()
def sources() -> None:
    """Configured data sources (MCP servers, web sources; SCIENCE_AGENT_SOURCES_FILE)."""


@sources.command("list")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None)
@one_line_errors
def list_sources_command(data_dir: str | None) -> None:
    """Show each source, where it is, its approval status and its tools."""
    from sciencediscovery.data_source.catalog import catalog, render

    from .bootstrap.platform import Platform

    platform = Platform.from_options(data_dir=data_dir)
    try:
        click.echo(render(catalog(platform.sources, platform.broker, {})))
    finally:
        platform.close()


@sources.command("approve")
@click.argument("name")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@one_line_errors
def approve_source_command(name: str, data_dir: str | None, yes: bool) -> None:
    """Start MCP server NAME, list its tools and approve that list for runs (shows the exact command first)."""
    from .bootstrap.platform import Platform

    platform = Platform.from_options(data_dir=data_dir)
    try:
        if platform.broker is None:
            raise click.ClickException("no MCP servers are configured (SCIENCE_AGENT_SOURCES_FILE)")
        server = platform.broker.server(name)
        click.echo(f"server {name} will be started as: {server.permission_specifier}")
        if not yes:
            click.confirm("approve its current tool list?", abort=True)
        change = asyncio.run(platform.broker.approve(name))
        click.echo(f"approved {name}: {', '.join(t.name for t in platform.broker.approved_tools(name) or ())}")
        if change:
            click.echo(f"changes since the last approval: {change}")
    finally:
        platform.close()


@main.group()
def tools() -> None:
    """Tools contributed by installed plugins."""


@tools.command("list")
@click.option("--workspace", type=click.Path(), default=None)
@one_line_errors
def list_tools_command(workspace: str | None) -> None:
    """Show every tool installed plugins contribute (deferred tools marked)."""
    from rich.table import Table

    from .bootstrap.platform import Platform

    platform = Platform.from_options(workspace=workspace)
    try:
        catalog = platform.tool_catalog()
    finally:
        platform.close()
    table = Table("tool", "source", "action", "deferred", "description")
    for tool in catalog:
        table.add_row(tool.name, tool.source, tool.action.value, "yes" if tool.deferred else "", tool.description[:80])
    wide_console().print(table)
