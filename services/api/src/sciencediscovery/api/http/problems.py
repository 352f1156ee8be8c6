"""RFC 9457 problem responses: every error the service returns is a JSON problem body."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import (
    DecisionConflictError,
    RunConflictError,
    ServiceError,
    SessionExistsError,
    StoreError,
    UnknownPermissionRequestError,
    UnknownRunError,
    UnknownSessionError,
)

PROBLEM_TYPE = "application/problem+json"


def problem(status: int, title: str, detail: str, **extra: Any) -> JSONResponse:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM_TYPE)


def _status_of(error: ServiceError) -> tuple[int, str]:
    if isinstance(error, StoreError):
        return 503, "Service Unavailable"
    if isinstance(error, UnknownSessionError | UnknownRunError | UnknownPermissionRequestError):
        return 404, "Not Found"
    if isinstance(error, RunConflictError | SessionExistsError | DecisionConflictError):
        return 409, "Conflict"
    return 400, "Bad Request"


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        errors = [
            {"field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"), "message": e.get("msg", "")}
            for e in error.errors()
        ]
        detail = "; ".join(f"{e['field'] or 'body'}: {e['message']}" for e in errors)
        return problem(422, "Unprocessable Content", detail, errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        return problem(error.status_code, str(error.detail) if error.status_code < 500 else "Error", str(error.detail))

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, error: ServiceError) -> JSONResponse:
        status, title = _status_of(error)
        return problem(status, title, str(error))

    @app.exception_handler(ValueError)
    async def value_error(request: Request, error: ValueError) -> JSONResponse:
        return problem(400, "Bad Request", str(error))
