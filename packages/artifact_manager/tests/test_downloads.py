"""Governed downloads against a real HTTP server on 127.0.0.1: every state transition and failure."""

from __future__ import annotations

import asyncio
import hashlib
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sciencediscovery.artifact_manager import (
    TRANSITIONS,
    ArtifactStore,
    DownloadManager,
    DownloadState,
    InvalidArtifactRequestError,
    InvalidTransitionError,
)

S = DownloadState


@pytest.fixture
def manager(tmp_path: Path) -> DownloadManager:
    return DownloadManager(ArtifactStore(tmp_path / "data"), max_bytes=1024, timeout_s=10)


def _download(manager: DownloadManager, url: str, **fields) -> tuple:
    download = manager.request(url, **fields)
    manager.approve(download.download_id, "allowed by test")
    finished = asyncio.run(manager.fetch(download.download_id))
    return finished, [state for state, _ in manager.transitions(download.download_id)]


def _no_partials(manager: DownloadManager) -> bool:
    return list(manager.store.partial_dir.iterdir()) == []


def test_completed_download_is_registered_with_its_checksum(manager, http_base, csv_body) -> None:
    expected = hashlib.sha256(csv_body).hexdigest()
    download, states = _download(manager, f"{http_base}/data.csv", expected_sha256=expected)
    assert states == [S.REQUESTED, S.APPROVED, S.DOWNLOADING, S.COMPLETED]
    assert (download.state, download.sha256, download.bytes_received) == (S.COMPLETED, expected, len(csv_body))
    artifact = manager.store.get(download.artifact_id)
    assert (artifact.name, artifact.kind.value) == ("data.csv", "table")
    assert manager.store.blob_path(expected).read_bytes() == csv_body
    assert _no_partials(manager)


def test_redirect_is_followed(manager, http_base, csv_body) -> None:
    download, _ = _download(manager, f"{http_base}/moved", name="moved.csv")
    assert download.state is S.COMPLETED and download.sha256 == hashlib.sha256(csv_body).hexdigest()


@pytest.mark.parametrize(("path", "reason"), [("/elsewhere", "another origin"), ("/loop", "more than 5 redirects")])
def test_redirects_leave_neither_the_origin_nor_bound(manager, http_base, path, reason) -> None:
    download, states = _download(manager, f"{http_base}{path}", name="x.csv")
    assert states[-1] is S.FAILED and reason in download.error
    assert manager.store.artifacts() == [] and _no_partials(manager)


def test_checksum_mismatch_fails_and_registers_nothing(manager, http_base) -> None:
    download, states = _download(manager, f"{http_base}/data.csv", expected_sha256="0" * 64)
    assert states == [S.REQUESTED, S.APPROVED, S.DOWNLOADING, S.FAILED]
    assert "checksum mismatch" in download.error and download.artifact_id is None
    assert manager.store.artifacts() == [] and manager.store.count_blobs() == 0 and _no_partials(manager)


@pytest.mark.parametrize("path", ["/big", "/big-undeclared"])
def test_size_limit_fails_declared_or_streamed(manager, http_base, path) -> None:
    download, states = _download(manager, f"{http_base}{path}")
    assert states[-1] is S.FAILED and "size limit" in download.error
    assert manager.store.artifacts() == [] and _no_partials(manager)


def test_per_request_limit_cannot_raise_the_ceiling(manager, http_base, big_body) -> None:
    download = manager.request(f"{http_base}/big", max_bytes=len(big_body) * 2)
    assert download.max_bytes == 1024


def test_http_error_fails(manager, http_base) -> None:
    download, states = _download(manager, f"{http_base}/missing")
    assert states[-1] is S.FAILED and "HTTP 404" in download.error


def test_unreachable_server_fails(manager) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    download, states = _download(manager, f"http://127.0.0.1:{port}/x.csv")
    assert states[-1] is S.FAILED and "transfer error" in download.error


def test_denied_request_fails_without_transfer(manager, http_base) -> None:
    download = manager.request(f"{http_base}/data.csv")
    failed = manager.fail(download.download_id, "permission denied")
    assert failed.state is S.FAILED and failed.error == "permission denied"
    with pytest.raises(InvalidTransitionError, match="from failed to approved"):
        manager.approve(download.download_id)


def test_fetch_needs_approval(manager, http_base) -> None:
    download = manager.request(f"{http_base}/data.csv")
    with pytest.raises(InvalidTransitionError, match="from requested to downloading"):
        asyncio.run(manager.fetch(download.download_id))
    assert manager.get(download.download_id).state is S.REQUESTED


def _loopback_only(url: str) -> bool:
    return urlsplit(url).hostname == "127.0.0.1"


def test_network_policy_refuses_the_url_before_any_transfer(tmp_path, http_base, policy) -> None:
    refuse_loopback = policy(lambda url: not _loopback_only(url))
    manager = DownloadManager(ArtifactStore(tmp_path / "data"), max_bytes=1024, network_policy=refuse_loopback)
    download, states = _download(manager, f"{http_base}/data.csv")
    assert states == [S.REQUESTED, S.APPROVED, S.DOWNLOADING, S.FAILED]
    assert "refused by the network policy" in download.error and f"refuses {http_base}/data.csv" in download.error
    assert refuse_loopback.checked == [f"{http_base}/data.csv"]
    assert manager.store.artifacts() == [] and _no_partials(manager)


def test_network_policy_allowing_loopback_checks_every_hop(tmp_path, http_base, policy, csv_body) -> None:
    loopback = policy(_loopback_only)
    manager = DownloadManager(ArtifactStore(tmp_path / "data"), max_bytes=1024, network_policy=loopback)
    download, _ = _download(manager, f"{http_base}/moved", name="moved.csv")
    assert download.state is S.COMPLETED and download.sha256 == hashlib.sha256(csv_body).hexdigest()
    assert loopback.checked == [f"{http_base}/moved", f"{http_base}/data.csv"]


def test_network_policy_refusing_a_redirect_target_fails_the_download(tmp_path, http_base, policy) -> None:
    no_data = policy(lambda url: _loopback_only(url) and not url.endswith("/data.csv"))
    manager = DownloadManager(ArtifactStore(tmp_path / "data"), max_bytes=1024, network_policy=no_data)
    download, states = _download(manager, f"{http_base}/moved", name="moved.csv")
    assert states[-1] is S.FAILED and f"{http_base}/data.csv refused by the network policy" in download.error
    assert no_data.checked == [f"{http_base}/moved", f"{http_base}/data.csv"]
    assert manager.store.artifacts() == [] and _no_partials(manager)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"url": "file:///etc/passwd"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": "http://a b.org/x"}, "url"),
        ({"url": "http://127.0.0.1/x", "expected_sha256": "abc"}, "sha256"),
        ({"url": "http://127.0.0.1/x", "max_bytes": 0}, "max_bytes"),
        ({"url": "http://127.0.0.1/x", "name": "../etc/passwd"}, "name"),
    ],
)
def test_bad_requests_name_the_field(manager, fields, field) -> None:
    url = fields.pop("url")
    with pytest.raises(InvalidArtifactRequestError, match=field):
        manager.request(url, **fields)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([S.APPROVED, S.DOWNLOADING, S.COMPLETED, S.FAILED]), max_size=6))
def test_only_allowed_transitions_happen(manager, targets) -> None:
    download = manager.request("http://127.0.0.1/x.csv")
    state = S.REQUESTED
    for target in targets:
        if target in TRANSITIONS[state]:
            assert manager._move(download.download_id, target).state is target
            state = target
        else:
            with pytest.raises(InvalidTransitionError):
                manager._move(download.download_id, target)
    assert [s for s, _ in manager.transitions(download.download_id)][-1] is state
