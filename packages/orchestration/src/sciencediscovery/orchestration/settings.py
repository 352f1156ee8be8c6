"""The run-settings keys orchestration reads, and how each is resolved (errors name the key).

``prepare_settings`` runs this package's own hooks (``register_skills``,
``register_specialists``) once, so every orchestration hook of the run shares
one Skill library and one specialist table.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core import ConfigurationError
from sciencediscovery.tools.registry import ToolRegistry

from .contract import RunContract
from .errors import RunContractError
from .profiles import ProfileSet, load_profiles, profiles_from_mapping
from .skills import SkillLibrary, skill_folders
from .specialists import SpecialistDefinition

PROFILES = "profiles"
"""A :class:`ProfileSet`, a mapping of scope to profile fields, or a path to a TOML/JSON profile file."""
RUN_CONTRACT = "run_contract"
"""The run's :class:`RunContract` or its JSON shape ``{objective, constraints, outputRequirements}``."""
GOVERNANCE_SUMMARY = "governance_summary"
"""Plain data (str or mapping), or a callable returning it, summarising the permission epoch and policy."""
SKILL_DIRS = "skill_dirs"
"""Directories holding Skill folders."""
SKILL_LIBRARY = "skill_library"
"""A ready :class:`SkillLibrary` (set by :func:`prepare_settings`)."""
SPECIALISTS = "specialists"
"""Specialist name to :class:`SpecialistDefinition` (set by :func:`prepare_settings`)."""
CHILD_RUN_FACTORY = "child_run_factory"
"""The composition root's :class:`ChildRunFactory`; without it the ``task`` tool is not registered."""
TOOL_REGISTRY = "tool_registry"
"""The run's :class:`~sciencediscovery.tools.registry.ToolRegistry`; its unpromoted deferred tools are announced
as searchable (names only)."""
TASK_BRIEF_CHARS = "task_brief_max_chars"
"""Upper bound of a subagent brief returned by ``task`` (default 4000)."""


def profiles(settings: Mapping[str, Any]) -> ProfileSet:
    """The run's profiles: ``settings["profiles"]`` resolved, else the built-in defaults."""
    value = settings.get(PROFILES)
    if value is None:
        return ProfileSet.defaults()
    if isinstance(value, ProfileSet):
        return value
    if isinstance(value, str | Path):
        return load_profiles(value)
    if isinstance(value, Mapping):
        return profiles_from_mapping(value, source=f"settings[{PROFILES!r}]")
    raise ConfigurationError(PROFILES, f"must be a ProfileSet, a mapping or a file path, got {type(value).__name__}")


def run_contract(settings: Mapping[str, Any]) -> RunContract | None:
    value = settings.get(RUN_CONTRACT)
    if value is None or isinstance(value, RunContract):
        return value
    try:
        return RunContract.from_mapping(value)
    except RunContractError as error:
        raise ConfigurationError(f"{RUN_CONTRACT}.{error.field}", error.detail) from error


def skill_library(settings: Mapping[str, Any]) -> SkillLibrary | None:
    """The prepared library, else one built from ``skill_dirs`` alone, else ``None``."""
    library = settings.get(SKILL_LIBRARY)
    if library is not None:
        if not isinstance(library, SkillLibrary):
            raise ConfigurationError(SKILL_LIBRARY, f"must be a SkillLibrary, got {type(library).__name__}")
        return library
    directories = settings.get(SKILL_DIRS)
    if not directories:
        return None
    return SkillLibrary(skill_folders(_directories(directories)))


def _directories(value: Any) -> list[str | Path]:
    if isinstance(value, str | Path) or not isinstance(value, list | tuple):
        raise ConfigurationError(SKILL_DIRS, "must be a list of directories")
    return list(value)


def specialists(settings: Mapping[str, Any]) -> dict[str, SpecialistDefinition]:
    return dict(settings.get(SPECIALISTS) or {})


def tool_registry(settings: Mapping[str, Any]) -> ToolRegistry | None:
    registry = settings.get(TOOL_REGISTRY)
    if registry is not None and not isinstance(registry, ToolRegistry):
        raise ConfigurationError(TOOL_REGISTRY, f"must be a ToolRegistry, got {type(registry).__name__}")
    return registry


def brief_chars(settings: Mapping[str, Any]) -> int | None:
    value = settings.get(TASK_BRIEF_CHARS)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigurationError(TASK_BRIEF_CHARS, f"must be a positive integer, got {value!r}")
    return value


def prepare_settings(plugin_manager: Any, settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` plus a shared Skill library (``skill_dirs`` and ``register_skills``), the specialists
    (``register_specialists``) and the resolved profiles. Call once per run before the other hooks."""
    folders: list[str | Path] = []
    plugin_manager.hook.register_skills(register=folders.append, settings=settings)
    found = skill_folders(_directories(settings.get(SKILL_DIRS) or []))
    table: dict[str, SpecialistDefinition] = {}

    def register_specialist(definition: SpecialistDefinition) -> None:
        if not isinstance(definition, SpecialistDefinition):
            raise ConfigurationError(SPECIALISTS, f"register() needs a SpecialistDefinition, got {definition!r}")
        if definition.name in table:
            raise ConfigurationError(SPECIALISTS, f"specialist {definition.name!r} is registered twice")
        table[definition.name] = definition

    plugin_manager.hook.register_specialists(register=register_specialist, settings=settings)
    return {
        **settings,
        PROFILES: profiles(settings),
        SKILL_LIBRARY: SkillLibrary([*found, *folders]),
        SPECIALISTS: table,
    }
