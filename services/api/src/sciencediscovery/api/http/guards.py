"""ASGI middleware: bearer-token authentication and a request-body size limit."""

from __future__ import annotations

import hmac
import json

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .problems import PROBLEM_TYPE


async def _send_problem(
    send: Send, status: int, title: str, detail: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps({"type": "about:blank", "title": title, "status": status, "detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", PROBLEM_TYPE.encode()), (b"content-length", str(len(body)).encode())]
            + (headers or []),
        }
    )
    await send({"type": "http.response.body", "body": body})


class BearerTokenGuard:
    """Requires ``Authorization: Bearer <token>`` on every request when a token is configured."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.token:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        supplied = headers.get(b"authorization", b"").decode("latin-1")
        expected = f"Bearer {self.token}"
        if not hmac.compare_digest(supplied.encode(), expected.encode()):
            await _send_problem(
                send, 401, "Unauthorized", "a valid bearer token is required", [(b"www-authenticate", b"Bearer")]
            )
            return
        await self.app(scope, receive, send)


class BodySizeLimit:
    """Refuses request bodies larger than ``max_bytes`` with 413, whether declared or streamed.

    A streamed body that grows too large raises an HTTP 413 from ``receive``, which the
    framework turns into a problem response.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _send_problem(send, 413, "Content Too Large", f"request body exceeds {self.max_bytes} bytes")
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, f"request body exceeds {self.max_bytes} bytes")
            return message

        await self.app(scope, limited_receive, send)


__all__ = ["BearerTokenGuard", "BodySizeLimit"]
