"""Service settings: command-line values over environment variables over defaults, validated at startup."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from sciencediscovery.runtime_core import ConfigurationError
from sciencediscovery.runtime_core.config import choice, flag, positive_int

MODES = ("dynamic", "shadow", "legacy")
SCOPES = ("main", "subagent", "reviewer")
DATA_DIR_VARIABLE = "SCIENCEDISCOVERY_DATA_DIR"
MODEL_VARIABLE = "SCIENCEDISCOVERY_MODEL"
TOKEN_VARIABLE = "SCIENCEDISCOVERY_API_TOKEN"
PROFILES_VARIABLE = "SCIENCEDISCOVERY_PROFILES"
REVIEW_VARIABLE = "SCIENCEDISCOVERY_REVIEW"


@attrs.frozen
class ServiceSettings:
    """Everything the composition root needs to build runs."""

    data_dir: Path
    mode: str = "dynamic"
    scope: str = "main"
    model: str | None = None
    trace: bool = False
    trace_dir: Path | None = None
    skill_dirs: tuple[Path, ...] = ()
    workspace: Path | None = None
    max_turns: int = 50
    profiles: Path | Mapping[str, Any] | None = None
    review: bool = False
    environ: Mapping[str, str] = attrs.field(factory=dict, repr=False)

    @property
    def store_path(self) -> Path:
        return self.data_dir / "sessions.sqlite"

    @property
    def resolved_trace_dir(self) -> Path:
        return self.trace_dir or self.data_dir / "context-traces"

    @classmethod
    def load(
        cls,
        *,
        data_dir: str | Path | None = None,
        mode: str | None = None,
        scope: str | None = None,
        model: str | None = None,
        trace_dir: str | Path | None = None,
        skill_dirs: tuple[str | Path, ...] = (),
        workspace: str | Path | None = None,
        max_turns: int | None = None,
        profiles: str | Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> ServiceSettings:
        env = dict(os.environ if environ is None else environ)
        if mode is None:
            mode = choice(env, "SCIENCE_AGENT_CONTEXT_MODE", MODES, "dynamic")
        else:
            mode = choice({"--mode": mode}, "--mode", MODES, "dynamic")
        if scope is not None and scope not in SCOPES:
            raise ConfigurationError("--scope", f"must be one of {', '.join(SCOPES)}; got {scope!r}")
        if max_turns is not None and max_turns < 1:
            raise ConfigurationError("--max-turns", f"must be a positive integer, got {max_turns}")
        trace_dir = trace_dir or env.get("SCIENCE_AGENT_CONTEXT_TRACE_DIR") or None
        workspace_path = Path(workspace) if workspace else None
        if workspace_path is not None and not workspace_path.is_dir():
            raise ConfigurationError("--workspace", f"{workspace_path} is not a directory")
        for folder in skill_dirs:
            if not Path(folder).is_dir():
                raise ConfigurationError("--skills", f"{folder} is not a directory")
        profiles = profiles or env.get(PROFILES_VARIABLE) or None
        if profiles is not None and not Path(profiles).is_file():
            raise ConfigurationError("--profiles", f"{profiles} is not a file")
        return cls(
            data_dir=Path(data_dir or env.get(DATA_DIR_VARIABLE) or ".sciencediscovery").resolve(),
            mode=mode,
            scope=scope or "main",
            model=model or env.get(MODEL_VARIABLE) or None,
            trace=flag(env, "SCIENCE_AGENT_CONTEXT_TRACE") or trace_dir is not None,
            trace_dir=Path(trace_dir).resolve() if trace_dir else None,
            skill_dirs=tuple(Path(f).resolve() for f in skill_dirs),
            workspace=workspace_path.resolve() if workspace_path else None,
            max_turns=max_turns or positive_int(env, "SCIENCEDISCOVERY_MAX_TURNS", 50) or 50,
            profiles=Path(profiles).resolve() if profiles else None,
            review=flag(env, REVIEW_VARIABLE),
            environ=env,
        )
