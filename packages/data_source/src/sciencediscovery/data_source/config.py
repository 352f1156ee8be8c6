"""Source configuration: MCP servers (stdio or streamable HTTP) and web sources, validated at load.

The data is a mapping ``{"mcpServers": {name: server}, "webSources": {name: source}}`` (the
``mcpServers`` shape is the one MCP clients commonly use). A stdio server is
``{"command", "args", "env", "cwd", "description", "timeout_s"}``; an HTTP server is
``{"url", "headers", "description", "timeout_s"}`` where every header value is a secret
reference ``{"secret": "NAME", "prefix": "Bearer "}`` resolved from the environment at connect
time and never logged. A web source is ``{"url", "description"}``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .errors import SourceConfigError

CONFIG_VARIABLE = "SCIENCE_AGENT_SOURCES_FILE"
SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
_DEFAULT_TIMEOUT_S = 60.0


@attrs.frozen
class SecretHeader:
    """A header whose value comes from the secret (environment variable) ``secret``; never logged."""

    secret: str
    prefix: str = ""

    def resolve(self, secrets: Mapping[str, str], where: str) -> str:
        value = secrets.get(self.secret)
        if not value:
            raise SourceConfigError(where, f"headers: secret {self.secret}", "is not set in the environment")
        return self.prefix + value


@attrs.frozen
class StdioServer:
    """A local MCP server started as a subprocess speaking MCP over stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    description: str = ""
    timeout_s: float = _DEFAULT_TIMEOUT_S

    @property
    def command_line(self) -> str:
        """The exact, untruncated command line, shell-quoted so it reads back to the same argv."""
        return shlex.join([self.command, *self.args])

    @property
    def permission_specifier(self) -> str:
        """What a permission request shows for this server: its name, exact command, working directory and
        environment (``env:`` then the shell-quoted ``KEY=VALUE`` pairs sorted by key), so a grant for one
        configuration does not cover the same command started with, say, ``LD_PRELOAD``."""
        where = f" cwd:{self.cwd}" if self.cwd else ""
        env = " env:" + " ".join(shlex.quote(f"{key}={self.env[key]}") for key in sorted(self.env)) if self.env else ""
        return f"server:{self.name} command:{self.command_line}{where}{env}"

    @property
    def location(self) -> str:
        return self.command_line


@attrs.frozen
class HttpServer:
    """A remote MCP server reached over streamable HTTP."""

    name: str
    url: str
    headers: Mapping[str, SecretHeader] = attrs.field(factory=dict)
    description: str = ""
    timeout_s: float = _DEFAULT_TIMEOUT_S

    @property
    def permission_specifier(self) -> str:
        return f"server:{self.name} url:{self.url}"

    @property
    def location(self) -> str:
        return self.url


ServerConfig = StdioServer | HttpServer


@attrs.frozen
class WebSource:
    """A described web source: fetches through its tool stay under ``url``."""

    name: str
    url: str
    description: str = ""


@attrs.frozen
class SourcesConfig:
    """Every configured MCP server and web source, by name."""

    servers: Mapping[str, ServerConfig] = attrs.field(factory=dict)
    web_sources: Mapping[str, WebSource] = attrs.field(factory=dict)


def _str(where: str, field: str, value: Any, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise SourceConfigError(where, field, f"must be a{'' if empty else ' non-empty'} string, got {value!r}")
    return value


def _keys(where: str, field: str, data: Any, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise SourceConfigError(where, field, f"must be a mapping, got {type(data).__name__}")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise SourceConfigError(where, f"{field}.{unknown[0]}", f"unknown key (allowed: {', '.join(sorted(allowed))})")
    return data


def _name(where: str, field: str, name: Any) -> str:
    if not isinstance(name, str) or not SERVER_NAME.fullmatch(name):
        raise SourceConfigError(where, field, f"name {name!r} must be 1-32 letters, digits, '_' or '-'")
    if "__" in name:
        raise SourceConfigError(where, field, f"name {name!r} must not contain '__' (it separates tool name parts)")
    return name


def _timeout(where: str, field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise SourceConfigError(where, field, f"must be a positive number of seconds, got {value!r}")
    return float(value)


def _url(where: str, field: str, value: Any) -> str:
    text = _str(where, field, value)
    if not re.match(r"^https?://[^/\s]+", text):
        raise SourceConfigError(where, field, f"must be an http(s) URL, got {value!r}")
    return text


def _server(where: str, name: str, data: Any) -> ServerConfig:
    field = f"mcpServers.{name}"
    common = {"description", "timeout_s"}
    if isinstance(data, Mapping) and "url" in data:
        body = _keys(where, field, data, common | {"url", "headers", "type"})
        headers = {}
        for header, ref in _keys(
            where, f"{field}.headers", body.get("headers", {}), set(body.get("headers", {}))
        ).items():
            ref_field = f"{field}.headers.{header}"
            if not isinstance(ref, Mapping) or "secret" not in ref:
                raise SourceConfigError(where, ref_field, 'must be a secret reference {"secret": "NAME"}, not a value')
            _keys(where, ref_field, ref, {"secret", "prefix"})
            headers[_str(where, ref_field, header)] = SecretHeader(
                _str(where, f"{ref_field}.secret", ref["secret"]),
                _str(where, f"{ref_field}.prefix", ref.get("prefix", ""), empty=True),
            )
        return HttpServer(
            name=name,
            url=_url(where, f"{field}.url", body["url"]),
            headers=headers,
            description=_str(where, f"{field}.description", body.get("description", ""), empty=True),
            timeout_s=_timeout(where, f"{field}.timeout_s", body.get("timeout_s", _DEFAULT_TIMEOUT_S)),
        )
    body = _keys(where, field, data, common | {"command", "args", "env", "cwd", "type"})
    if "command" not in body:
        raise SourceConfigError(where, field, "needs 'command' (stdio) or 'url' (streamable HTTP)")
    args = body.get("args", [])
    if isinstance(args, str) or not isinstance(args, list | tuple):
        raise SourceConfigError(where, f"{field}.args", "must be a list of strings")
    env = _keys(where, f"{field}.env", body.get("env", {}), set(body.get("env", {})))
    cwd = body.get("cwd")
    return StdioServer(
        name=name,
        command=_str(where, f"{field}.command", body["command"]),
        args=tuple(_str(where, f"{field}.args[{i}]", arg, empty=True) for i, arg in enumerate(args)),
        env={
            _str(where, f"{field}.env", key): _str(where, f"{field}.env.{key}", value, empty=True)
            for key, value in env.items()
        },
        cwd=None if cwd is None else _str(where, f"{field}.cwd", cwd),
        description=_str(where, f"{field}.description", body.get("description", ""), empty=True),
        timeout_s=_timeout(where, f"{field}.timeout_s", body.get("timeout_s", _DEFAULT_TIMEOUT_S)),
    )


def _web_source(where: str, name: str, data: Any) -> WebSource:
    field = f"webSources.{name}"
    body = _keys(where, field, data, {"url", "description"})
    if "url" not in body:
        raise SourceConfigError(where, field, "needs 'url'")
    return WebSource(
        name=name,
        url=_url(where, f"{field}.url", body["url"]),
        description=_str(where, f"{field}.description", body.get("description", ""), empty=True),
    )


def sources_from_data(data: Any, where: str) -> SourcesConfig:
    """Validate configuration data; ``where`` (a file or settings key) is named in every error."""
    body = _keys(where, "sources", data, {"mcpServers", "webSources"})
    servers = {
        _name(where, f"mcpServers.{name}", name): _server(where, name, server)
        for name, server in _keys(
            where, "mcpServers", body.get("mcpServers", {}), set(body.get("mcpServers", {}))
        ).items()
    }
    web = {
        _name(where, f"webSources.{name}", name): _web_source(where, name, source)
        for name, source in _keys(
            where, "webSources", body.get("webSources", {}), set(body.get("webSources", {}))
        ).items()
    }
    return SourcesConfig(servers, web)


def sources_from_file(path: str | Path) -> SourcesConfig:
    """Read a JSON sources file; errors name the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise SourceConfigError(str(path), "file", f"cannot be read ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise SourceConfigError(str(path), f"line {error.lineno}", f"invalid JSON: {error.msg}") from None
    return sources_from_data(data, str(path))


def sources_from_settings(settings: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> SourcesConfig:
    """``settings["data_sources"]`` (data or a :class:`SourcesConfig`), else the file named by
    ``SCIENCE_AGENT_SOURCES_FILE``, else nothing configured."""
    value = settings.get("data_sources")
    if isinstance(value, SourcesConfig):
        return value
    if value is not None:
        return sources_from_data(value, "settings: data_sources")
    path = (os.environ if environ is None else environ).get(CONFIG_VARIABLE, "").strip()
    return sources_from_file(path) if path else SourcesConfig()
