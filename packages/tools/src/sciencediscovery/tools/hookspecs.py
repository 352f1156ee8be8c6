"""Hooks owned by the tools package."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookspec

from .definitions import ToolDefinition, ToolGate, ToolObserver


@hookspec
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """Register tools by calling ``register(ToolDefinition(...))`` once per tool.

    ``settings`` is the run's configuration from the composition root (keys are
    documented in docs/configuration.md); read what you need, ignore the rest.
    """


@hookspec
def register_tool_gates(register: Callable[[ToolGate], None], settings: Mapping[str, Any]) -> None:
    """Register gates that every invocation must pass before its handler runs (all must allow)."""


@hookspec
def register_tool_observers(register: Callable[[ToolObserver], None], settings: Mapping[str, Any]) -> None:
    """Register observers called after every invocation with its canonical result."""
