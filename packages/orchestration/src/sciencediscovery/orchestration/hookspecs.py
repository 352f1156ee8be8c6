"""Hooks owned by the orchestration package."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core import hookspec

from .specialists import SpecialistDefinition


@hookspec
def register_skills(register: Callable[[str | Path], None], settings: Mapping[str, Any]) -> None:
    """Register Skill folders by calling ``register(folder)`` once per folder holding a ``SKILL.md``.

    Hook Skills join those found under ``settings["skill_dirs"]``; two Skills
    with one name are an error naming both folders.
    """


@hookspec
def register_specialists(register: Callable[[SpecialistDefinition], None], settings: Mapping[str, Any]) -> None:
    """Register subagent specialists by calling ``register(SpecialistDefinition(...))``; names must be unique.

    The ``task`` tool offers each as a ``specialist`` choice.
    """
