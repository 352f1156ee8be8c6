"""Reading the package's keys from the run's ``settings`` mapping; errors name the key."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciencediscovery.runtime_core import ConfigurationError

from .downloads import UrlPolicy, UrlVerdict

DEFAULT_MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024


def data_dir(settings: Mapping[str, Any]) -> Path:
    """``settings["data_dir"]``: where ``artifacts.sqlite3`` and ``artifacts/`` live (required)."""
    value = settings.get("data_dir")
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ConfigurationError(
            "data_dir", f"sciencediscovery-artifact-manager needs a data directory path, got {value!r}"
        )
    return Path(value)


def workspace_dir(settings: Mapping[str, Any]) -> Path:
    """``settings["workspace_dir"]``: ``register_artifact`` paths resolve inside it (default: the current directory)."""
    value = settings.get("workspace_dir", Path.cwd())
    if not isinstance(value, str | Path) or not str(value).strip():
        raise ConfigurationError("workspace_dir", f"must be a directory path, got {value!r}")
    return Path(value).resolve()


def max_download_bytes(settings: Mapping[str, Any]) -> int:
    """``settings["artifact_max_download_bytes"]``: the ceiling for any one download (default 256 MiB)."""
    value = settings.get("artifact_max_download_bytes", DEFAULT_MAX_DOWNLOAD_BYTES)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError("artifact_max_download_bytes", f"must be a positive integer, got {value!r}")
    return value


NETWORK_POLICY_SETTING = "network_policy"


class _Refusal:
    """The verdict of :class:`_RefuseAll`."""

    allowed = False

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _RefuseAll:
    """Stands in for a ``network_policy`` setting this package cannot apply: every URL is refused."""

    def __init__(self, value: object) -> None:
        self.reason = (
            f"settings[{NETWORK_POLICY_SETTING!r}] is a {type(value).__name__}, not a policy object with "
            "check_url(url) (pass the NetworkPolicy itself); downloads are refused"
        )

    def check_url(self, url: str) -> UrlVerdict:
        return _Refusal(self.reason)


def network_policy(settings: Mapping[str, Any]) -> UrlPolicy | None:
    """``settings["network_policy"]``: checks every download URL and redirect target (None when absent).

    Any object with ``check_url(url)`` returning something with ``allowed`` and ``reason`` is used
    (governance's ``NetworkPolicy``). Any other value (a config mapping, which only governance can
    read) fails closed: every download is refused with a reason naming the setting.
    """
    value = settings.get(NETWORK_POLICY_SETTING)
    if value is None:
        return None
    if callable(getattr(value, "check_url", None)):
        policy: UrlPolicy = value
        return policy
    return _RefuseAll(value)
