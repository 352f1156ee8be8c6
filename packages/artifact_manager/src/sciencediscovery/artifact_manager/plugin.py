"""Entry-point plugin of sciencediscovery-artifact-manager: its tools, tool observer and artifacts channel."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.context import StateChannel
from sciencediscovery.runtime_core import hookimpl
from sciencediscovery.tools.definitions import ToolDefinition, ToolObserver

from .channels import ArtifactsChannel
from .downloads import DownloadManager
from .observer import ArtifactObserver
from .settings import data_dir, max_download_bytes, network_policy, workspace_dir
from .store import open_store
from .tools import artifact_tools


@hookimpl
def register_tools(register: Callable[[ToolDefinition], None], settings: Mapping[str, Any]) -> None:
    """``register_artifact``, ``list_artifacts``, ``read_artifact`` and ``download_artifact``."""
    store = open_store(data_dir(settings))
    downloads = DownloadManager(store, max_bytes=max_download_bytes(settings), network_policy=network_policy(settings))
    for tool in artifact_tools(store, downloads, workspace_dir(settings)):
        register(tool)


@hookimpl
def register_tool_observers(register: Callable[[ToolObserver], None], settings: Mapping[str, Any]) -> None:
    """The observer that registers files announced in ``metadata["artifacts"]``."""
    register(ArtifactObserver(open_store(data_dir(settings))))


@hookimpl
def register_state_channels(register: Callable[[StateChannel], None], settings: Mapping[str, Any]) -> None:
    """The ``artifacts`` channel."""
    register(ArtifactsChannel())
