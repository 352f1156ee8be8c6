"""Typed errors of the orchestration package. Each names the field, file or id at fault."""

from __future__ import annotations

from pathlib import Path


class OrchestrationError(Exception):
    """Base class of every error raised by sciencediscovery.orchestration."""


class FieldError(OrchestrationError, ValueError):
    """A structured value has an invalid field; ``field`` is its dotted path (e.g. ``items[2].status``)."""

    def __init__(self, field: str, message: str, *, source: str = "") -> None:
        self.field = field
        self.detail = message
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__(f"{prefix}{field}: {message}")


class ProfileError(FieldError):
    """An AgentRun profile (or its config file) is invalid."""


class RunContractError(FieldError):
    """A RunContract is invalid."""


class PlanError(FieldError):
    """An ``update_plan`` call is invalid."""


class TaskArgumentError(FieldError):
    """A ``task`` call is invalid."""


class SkillError(OrchestrationError):
    """A Skill could not be loaded or found."""


class SkillFormatError(SkillError, ValueError):
    """A Skill folder breaks the Agent Skills format; ``path`` names the file."""

    def __init__(self, path: Path, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


class DuplicateSkillError(SkillError, ValueError):
    """Two Skill folders declare the same name."""

    def __init__(self, name: str, first: Path, second: Path) -> None:
        self.name = name
        super().__init__(f"skill {name!r} is defined twice: {first} and {second}")


class UnknownSkillError(SkillError, LookupError):
    """No Skill with this id is available to the run."""

    def __init__(self, skill_id: str, available: tuple[str, ...]) -> None:
        self.skill_id = skill_id
        listed = ", ".join(available) or "none"
        super().__init__(f"no skill named {skill_id!r} (available: {listed})")
