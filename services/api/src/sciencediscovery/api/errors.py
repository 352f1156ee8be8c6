"""Typed errors of the service. Each names the session, run, file or field at fault."""

from __future__ import annotations


class ServiceError(Exception):
    """Base class of the service's errors; the CLI prints its message as one line."""


class UnknownSessionError(ServiceError, LookupError):
    def __init__(self, context_id: str) -> None:
        self.context_id = context_id
        super().__init__(f"no session with context id {context_id!r}")


class UnknownRunError(ServiceError, LookupError):
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"no run with id {run_id!r}")


class SessionExistsError(ServiceError):
    def __init__(self, context_id: str) -> None:
        self.context_id = context_id
        super().__init__(f"a session with context id {context_id!r} already exists")


class RunConflictError(ServiceError):
    """A run was started or resumed while another run of the same session is active."""


class StoreError(ServiceError):
    """The session store could not read or write (a corrupt row, a locked or unreadable file)."""


class UnknownPermissionRequestError(ServiceError, LookupError):
    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        super().__init__(f"no pending permission request with id {request_id!r}")


class DecisionConflictError(ServiceError):
    """A decision arrived for a request that is already resolved or belongs to an older permission epoch."""


class ModelNotAllowedError(ServiceError):
    """A client asked for a model spec this service does not allow over HTTP."""
