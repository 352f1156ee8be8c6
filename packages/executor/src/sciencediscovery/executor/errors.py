"""Typed errors of the executor; each names the setting, session or job at fault."""

from __future__ import annotations


class ExecutorError(Exception):
    """Base class of every error raised by sciencediscovery.executor."""


class ExecutorConfigError(ExecutorError, ValueError):
    """A setting is invalid; ``key`` is its dotted path in the run's settings (``executor.limits.cpu_seconds``)."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(f"settings[{key}]: {message}")


class SandboxUnavailableError(ExecutorError):
    """No sandbox can run here and unsandboxed execution was not opted into (fail closed)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(
            f"code execution refused: no sandbox is available ({reason}); "
            "set settings['executor']['allow_unsandboxed'] = true to opt into unsandboxed execution"
        )


class SessionError(ExecutorError):
    """A Python session could not start or answer; ``session`` names it."""

    def __init__(self, session: str, message: str) -> None:
        self.session = session
        super().__init__(f"python session {session!r}: {message}")


class JobNotFoundError(ExecutorError, KeyError):
    """No remote job has this id."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"no job with id {job_id!r}")

    def __str__(self) -> str:
        return str(self.args[0])
