"""Sandboxed scientific code execution and reproducible environment records."""

from .artifacts import ARTIFACTS_KEY, Artifact
from .capture import CapturedText
from .config import ExecutorConfig, Limits, MountMode, WorkspaceMount
from .environment import Distribution, EnvironmentRecord
from .errors import ExecutorConfigError, ExecutorError, JobNotFoundError, SandboxUnavailableError, SessionError
from .remote import JobNotFinishedError, JobState, JobStatus, LocalSandboxJobs, RemoteExecutionPort
from .results import ENVIRONMENT_REVISION_KEY, SANDBOX_KEY, ExecutionResult
from .runner import Executor
from .sandbox import ProcessLimit, SandboxMode, SandboxStatus
from .session import KernelSession, SessionPool
from .tools import ExecutorToolkit, environment_for_settings

__all__ = [
    "ARTIFACTS_KEY",
    "ENVIRONMENT_REVISION_KEY",
    "SANDBOX_KEY",
    "Artifact",
    "CapturedText",
    "Distribution",
    "EnvironmentRecord",
    "ExecutionResult",
    "Executor",
    "ExecutorConfig",
    "ExecutorConfigError",
    "ExecutorError",
    "ExecutorToolkit",
    "JobNotFinishedError",
    "JobNotFoundError",
    "JobState",
    "JobStatus",
    "KernelSession",
    "Limits",
    "LocalSandboxJobs",
    "MountMode",
    "ProcessLimit",
    "RemoteExecutionPort",
    "SandboxMode",
    "SandboxStatus",
    "SandboxUnavailableError",
    "SessionError",
    "SessionPool",
    "WorkspaceMount",
    "environment_for_settings",
]
