"""Entry-point plugin of sciencediscovery-executor: registers the execution tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.runtime_core import hookimpl
from sciencediscovery.tools.definitions import ToolDefinition

from .tools import ExecutorToolkit


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """Register ``run_code``, ``python_session``, the ``remote_job_*`` tools and ``execution_environment``.

    The settings are validated here, so a bad ``executor`` section fails at startup naming its key.
    """
    for definition in ExecutorToolkit.from_settings(settings).definitions():
        register(definition)
