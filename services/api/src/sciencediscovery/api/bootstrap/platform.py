"""Selects the concrete adapters of this process from configuration: store, plugins, model, governance, review."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.data_source import McpBroker, ToolPinStore, sources_from_settings
from sciencediscovery.executor import SandboxUnavailableError, environment_for_settings
from sciencediscovery.governance.config import DEFAULT_VARIABLE, FILE_VARIABLE, RULE_VARIABLES
from sciencediscovery.governance.network import NetworkPolicy
from sciencediscovery.governance.service import PermissionService
from sciencediscovery.governance.settings import service_from_settings
from sciencediscovery.model import ProviderModelClient
from sciencediscovery.orchestration import Reviewer, RunContract, prepare_settings
from sciencediscovery.orchestration.settings import profiles as resolve_profiles
from sciencediscovery.runtime_core import ConfigurationError, Message, RunEventSink, make_plugin_manager
from sciencediscovery.tools.definitions import ToolDefinition
from sciencediscovery.tools.registry import ToolRegistry
from sciencediscovery.tools.settings import OUTPUT_STORE_SETTING
from sciencediscovery.tools.store import MemoryToolOutputStore

from ..errors import ModelNotAllowedError
from ..http.app import ServiceParts
from ..runs import RunService, RunSummary
from ..settings import ServiceSettings
from ..store import DataDirLock, SqliteSessionStore
from .desks import GovernanceDesk, ProgressDisplay, RecordsDesk, ReviewRunnerAdapter
from .runtime import Composer

NETWORK_POLICY_VARIABLE = "SCIENCE_AGENT_NETWORK_POLICY"


def execution_environment(settings: Mapping[str, Any]) -> tuple[str | None, str]:
    """The executor's environment revision (for the permission epoch) and its one-line summary.

    The probe is asynchronous; it runs on its own loop in a worker thread so a platform can be
    built inside or outside a running event loop. Without a usable sandbox the revision is ``None``
    and the summary says why code execution is refused.
    """
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        try:
            record = pool.submit(asyncio.run, environment_for_settings(settings)).result()
        except SandboxUnavailableError as error:
            return None, f"code execution is refused: {error}"
    return record.revision, record.summary()


def network_policy(environ: Mapping[str, str]) -> NetworkPolicy:
    """The outbound network policy shared by governance and web access: ``SCIENCE_AGENT_NETWORK_POLICY``
    (JSON with ``allow``, ``deny``, ``allowed_networks``, ``default``, ``schemes``), else deny-all."""
    raw = environ.get(NETWORK_POLICY_VARIABLE, "").strip()
    if not raw:
        return NetworkPolicy.deny_all()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ConfigurationError(NETWORK_POLICY_VARIABLE, f"must be a JSON object: {error}") from error
    if not isinstance(data, dict):
        raise ConfigurationError(NETWORK_POLICY_VARIABLE, "must be a JSON object")
    try:
        return NetworkPolicy.from_config(data)
    except ValueError as error:
        raise ConfigurationError(NETWORK_POLICY_VARIABLE, str(error)) from error


SCRIPTS_DIR_VARIABLE = "SCIENCEDISCOVERY_SCRIPTS_DIR"
SESSION_OPTIONS = ("workspace", "skill_dirs", "profiles", "trace_dir")
PERMISSION_VARIABLES = (FILE_VARIABLE, DEFAULT_VARIABLE, *RULE_VARIABLES.values())


class Platform:
    """One process's adapters. Nothing outside ``bootstrap`` constructs domain objects."""

    def __init__(self, settings: ServiceSettings, *, plugin_manager: Any | None = None) -> None:
        self.settings = settings
        self.plugin_manager = plugin_manager or make_plugin_manager(environ=settings.environ)
        self._lock = DataDirLock(settings.data_dir)
        try:
            self.store = SqliteSessionStore(settings.store_path)
        except BaseException:
            self._lock.release()
            raise
        self.network_policy = network_policy(settings.environ)
        self.sources = sources_from_settings({}, settings.environ)
        self.broker = (
            McpBroker(self.sources, ToolPinStore(settings.data_dir / "data_source" / "mcp-approved-tools.json"))
            if self.sources.servers
            else None
        )
        self.composer = Composer(self)
        self.environment_revision, self.execution_summary = execution_environment(
            {"workspace_mounts": self.workspace_mounts(), "network_allowed": False}
        )
        self.permissions: PermissionService | None = None
        self.permissions = service_from_settings(
            {
                "workspace_mounts": self.workspace_mounts(),
                "network_policy": self.network_policy,
                "environment_revision": self.environment_revision,
                "permission_audit_path": str(settings.data_dir / "permission-audit.sqlite"),
                **self._default_rules(),
            },
            settings.environ,
        )
        self.runs = RunService(self.store, self.composer)

    @classmethod
    def for_session(cls, context_id: str, *, data_dir: str | None = None) -> Platform:
        """A platform rebuilt with the options a session was created with (workspace, Skills, profiles, traces)."""
        settings = ServiceSettings.load(data_dir=data_dir)
        store = SqliteSessionStore(settings.store_path)
        try:
            config = store.get_session(context_id).config
        finally:
            store.close()
        stored = {key: config.get(key) for key in SESSION_OPTIONS}
        stored["skill_dirs"] = tuple(stored["skill_dirs"] or ())
        return cls.from_options(data_dir=data_dir, **stored)

    @classmethod
    def from_options(cls, **options: Any) -> Platform:
        """Settings from command-line options (unset ones fall back to the environment)."""
        given = {key: value for key, value in options.items() if value not in (None, ())}
        return cls(ServiceSettings.load(**given))

    def _default_rules(self) -> dict[str, Any]:
        """Without configured rules: read-only tools are allowed, everything else is asked."""
        if any(self.settings.environ.get(variable, "").strip() for variable in PERMISSION_VARIABLES):
            return {}
        read_only = sorted(tool.name for tool in self.tool_catalog() if tool.read_only)
        return {"permission_rules": {"default": "ask", "allow": [f"{name}(*)" for name in read_only]}}

    # -- adapters -----------------------------------------------------------------
    def model_client(self, spec: str) -> ProviderModelClient:
        return ProviderModelClient.from_spec(spec, plugin_manager=self.plugin_manager, environ=self.settings.environ)

    def workspace_mounts(self) -> list[dict[str, str]]:
        workspace = self.settings.workspace
        return [{"name": "workspace", "path": str(workspace), "mode": "read_write"}] if workspace else []

    def run_settings(self, contract: RunContract, *, child_runs: Any) -> dict[str, Any]:
        """The settings mapping every plugin hook of a run receives (keys documented in docs/configuration.md)."""
        workspace = {"workspace_dir": str(self.settings.workspace)} if self.settings.workspace else {}
        profiles = {"profiles": self.settings.profiles} if self.settings.profiles is not None else {}
        governance = (
            {
                "permission_service": self.permissions,
                "governance_summary": self.governance_summary,
                "workspace_entry_filter": self.entry_visible,
            }
            if self.permissions is not None
            else {}
        )
        tool_policy = {k: v for k, v in self.settings.environ.items() if k.startswith("SCIENCE_AGENT_TOOL_")}
        return {
            **tool_policy,
            **workspace,
            **governance,
            **({"mcp_broker": self.broker} if self.broker is not None else {}),
            "network_policy": self.network_policy,
            "data_dir": str(self.settings.data_dir),
            "workspace_mounts": self.workspace_mounts(),
            "skill_dirs": [str(folder) for folder in self.settings.skill_dirs],
            "run_contract": contract,
            **profiles,
            "child_run_factory": child_runs,
            "review_runner": ReviewRunnerAdapter(Reviewer(child_runs, resolve_profiles(profiles))),
            "review_enabled": self.settings.review,
        }

    def event_sinks(self, settings: Mapping[str, Any]) -> list[RunEventSink]:
        """Sinks contributed by plugins through ``register_event_sinks``."""
        sinks: list[RunEventSink] = []
        self.plugin_manager.hook.register_event_sinks(register=sinks.append, settings=settings)
        return sinks

    def tool_catalog(self) -> list[ToolDefinition]:
        """Every tool the installed plugins contribute (deferred ones included), for ``tools list``."""
        contract = RunContract.from_mapping({"objective": "list tools"})
        settings = prepare_settings(self.plugin_manager, self.run_settings(contract, child_runs=self.composer))
        registry = ToolRegistry.from_plugins(
            self.plugin_manager, {**settings, OUTPUT_STORE_SETTING: MemoryToolOutputStore()}
        )
        return [tool for name in registry.names if (tool := registry.get(name)) is not None]

    def entry_visible(self, tool: str, path: str) -> bool:
        """Directory listings and searches leave out entries a deny rule protects (for the tool, or for read_file)."""
        assert self.permissions is not None
        return not (self.permissions.is_denied(tool, path) or self.permissions.is_denied("read_file", path))

    def governance_summary(self) -> dict[str, Any]:
        """The governance section's data, read every turn: epoch, rules, grants and how code runs here."""
        assert self.permissions is not None
        return {**self.permissions.describe(), "code execution": self.execution_summary}

    def close(self) -> None:
        """Stop MCP servers, close the store and release the data directory (end of a command or the service)."""
        if self.broker is not None:
            self.broker.close()
        self.store.close()
        self._lock.release()

    def check_http_model(self, spec: str) -> None:
        """Over HTTP a ``scripted:`` model may only name a file under ``SCIENCEDISCOVERY_SCRIPTS_DIR``
        (otherwise any client could make the service read any file)."""
        if not spec.startswith("scripted:"):
            return
        folder = self.settings.environ.get(SCRIPTS_DIR_VARIABLE, "").strip()
        target = Path(spec.removeprefix("scripted:")).resolve()
        if not folder or not target.is_relative_to(Path(folder).resolve()):
            raise ModelNotAllowedError(
                f"model {spec!r}: scripted models over HTTP must be files under {SCRIPTS_DIR_VARIABLE}"
            )

    def service_parts(self) -> ServiceParts:
        assert self.permissions is not None  # set in __init__
        records = RecordsDesk(self.settings.data_dir, self.store.runs_of)
        return ServiceParts(
            runs=self.runs,
            permissions=GovernanceDesk(self.permissions),
            artifacts=records.artifacts,
            provenance=records.provenance,
            check_model=self.check_http_model,
        )

    # -- the CLI's entry points -----------------------------------------------------
    async def run_new(
        self,
        structured_input: Mapping[str, Any],
        *,
        context_id: str | None = None,
        progress: bool = False,
        notices: bool = False,
    ) -> RunSummary:
        if not self.settings.model:
            raise ConfigurationError(
                "--model", "a model spec is required (openai:<model>, anthropic:<model>, scripted:<file>)"
            )
        self.model_client(
            self.settings.model
        )  # an unknown provider or a bad script file fails before anything is stored
        contract = RunContract.from_mapping(structured_input)
        config = {
            "model": self.settings.model,
            "mode": self.settings.mode,
            "scope": self.settings.scope,
            "max_turns": self.settings.max_turns,
            **self.session_options(),
        }
        session = self.runs.create_session(contract.to_json(), config, context_id)
        display = ProgressDisplay(
            self.runs.live, session.context_id, enabled=progress and sys.stderr.isatty(), notices=notices
        )
        with display:
            return await self.runs.run(session.context_id, Message.user(contract.objective))

    def session_options(self) -> dict[str, Any]:
        """The options a resumed session must be rebuilt with (stored in its config)."""
        settings = self.settings
        return {
            "workspace": str(settings.workspace) if settings.workspace else None,
            "skill_dirs": [str(folder) for folder in settings.skill_dirs],
            "profiles": str(settings.profiles) if isinstance(settings.profiles, Path) else None,
            "trace_dir": str(settings.trace_dir) if settings.trace_dir else None,
        }

    async def resume(self, context_id: str, *, progress: bool = False, notices: bool = False) -> RunSummary:
        """Continue a session from its last committed step (a run that died before its first step starts over).

        A session whose last run completed is already answered: its stored result is returned.
        """
        session = self.store.get_session(context_id)
        self.store.mark_unfinished_runs_interrupted(context_id)
        finished = [run for run in self.store.runs_of(context_id) if run.result is not None]
        last = finished[-1] if finished else None
        if (
            last is not None
            and last.result is not None
            and last.status == "completed"
            and self.runs.answered(context_id)
        ):
            return RunSummary(**last.result)
        objective = Message.user(RunContract.from_mapping(session.structured_input).objective)
        with ProgressDisplay(self.runs.live, context_id, enabled=progress and sys.stderr.isatty(), notices=notices):
            return await self.runs.run(context_id, objective)
