"""Serving the HTTP/SSE API with uvicorn."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

import structlog
import uvicorn

from .errors import ServiceError
from .http import create_app

if TYPE_CHECKING:
    from .bootstrap.platform import Platform

log = structlog.get_logger("sciencediscovery.api")


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    """Binding off loopback without a bearer token is refused."""
    if not is_loopback(host) and not token:
        raise ServiceError(f"refusing to bind {host} without a bearer token: set --token or SCIENCEDISCOVERY_API_TOKEN")


def build_server(platform: Platform, *, host: str, port: int, token: str | None) -> uvicorn.Server:
    check_binding(host, token)
    interrupted = platform.store.mark_unfinished_runs_interrupted()
    for record in interrupted:
        log.warning("run_interrupted", run_id=record.run_id, context_id=record.context_id)
    app = create_app(platform.service_parts(), token=token)
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))


def json_logging() -> None:
    """Operational logs of the service are JSON lines (the CLI keeps structlog's console rendering)."""
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(),
        ]
    )


def serve_forever(platform: Platform, *, host: str, port: int, token: str | None) -> None:
    json_logging()
    server = build_server(platform, host=host, port=port, token=token)
    log.info("serving", host=host, port=port, data_dir=str(platform.settings.data_dir))
    server.run()
