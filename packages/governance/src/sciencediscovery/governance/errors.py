"""Typed errors of governance. Each names the rule, field, request or epoch at fault."""

from __future__ import annotations


class GovernanceError(Exception):
    """Base class of every error raised by sciencediscovery.governance."""


class NetworkPolicyError(GovernanceError, ValueError):
    """A network policy setting is malformed; the message names the field and the value."""

    def __init__(self, field: str, value: str, message: str) -> None:
        self.field = field
        self.value = value
        super().__init__(f"network policy {field} {value!r}: {message}")


class RuleError(GovernanceError, ValueError):
    """A permission rule is malformed; the message names the rule and what is wrong with it."""

    def __init__(self, rule: str, message: str, *, source: str = "") -> None:
        self.rule = rule
        self.source = source
        where = f" (from {source})" if source else ""
        super().__init__(f"permission rule {rule!r}{where}: {message}")


class PermissionConfigError(GovernanceError, ValueError):
    """The permission configuration is malformed; the message names the key, variable or file."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        super().__init__(f"{where}: {message}")


class EpochError(GovernanceError, ValueError):
    """A permission epoch field is invalid; the message names the field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"permission epoch {field}: {message}")


class StaleEpochError(GovernanceError):
    """A decision or grant names an epoch that is no longer current."""

    def __init__(self, request_id: str, epoch_id: str, current_epoch_id: str) -> None:
        self.request_id = request_id
        self.epoch_id = epoch_id
        self.current_epoch_id = current_epoch_id
        super().__init__(
            f"permission request {request_id} belongs to epoch {epoch_id}; the current epoch is {current_epoch_id}"
        )


class UnknownRequestError(GovernanceError, KeyError):
    """No pending permission request has this id."""

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        super().__init__(f"no permission request {request_id!r}")

    def __str__(self) -> str:
        return str(self.args[0])


class AlreadyResolvedError(GovernanceError):
    """The permission request was already resolved; each request resolves exactly once."""

    def __init__(self, request_id: str, outcome: str) -> None:
        self.request_id = request_id
        self.outcome = outcome
        super().__init__(f"permission request {request_id} is already resolved ({outcome})")


class AuditLogError(GovernanceError):
    """The audit log file cannot be opened or written; the message names the file."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"permission audit log {path}: {message}")


class UnknownGrantError(GovernanceError, KeyError):
    """No standing grant of the current epoch has this id."""

    def __init__(self, grant_id: str) -> None:
        self.grant_id = grant_id
        super().__init__(f"no standing grant {grant_id!r} in the current epoch")

    def __str__(self) -> str:
        return str(self.args[0])


class InvalidDecisionError(GovernanceError, ValueError):
    """A decision sent to the decision API is malformed; the message names the field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"decision {field}: {message}")
