"""Permission epochs, rules, grants and the permission-decision queue."""

from .audit import AuditLog, AuditRecord
from .config import rules_from_data, rules_from_environment, rules_from_file
from .epoch import EpochMount, MountMode, PermissionEpoch
from .errors import (
    AlreadyResolvedError,
    AuditLogError,
    EpochError,
    GovernanceError,
    InvalidDecisionError,
    NetworkPolicyError,
    PermissionConfigError,
    RuleError,
    StaleEpochError,
    UnknownGrantError,
    UnknownRequestError,
)
from .gate import PermissionGate
from .grants import AllowMatching, AllowOnce, Decision, Deny, Grant, GrantScope, decision_from_data
from .network import NetworkDecision, NetworkDefault, NetworkPolicy
from .queue import DecisionQueue, PermissionRequest, Resolution
from .rules import Effect, Rule, RuleSet, Verdict
from .service import Authorization, PermissionService
from .settings import epoch_from_settings, service_from_settings

__all__ = [
    "AllowMatching",
    "AllowOnce",
    "AlreadyResolvedError",
    "AuditLog",
    "AuditLogError",
    "AuditRecord",
    "Authorization",
    "Decision",
    "DecisionQueue",
    "Deny",
    "Effect",
    "EpochError",
    "EpochMount",
    "GovernanceError",
    "Grant",
    "GrantScope",
    "InvalidDecisionError",
    "MountMode",
    "NetworkDecision",
    "NetworkDefault",
    "NetworkPolicy",
    "NetworkPolicyError",
    "PermissionConfigError",
    "PermissionEpoch",
    "PermissionGate",
    "PermissionRequest",
    "PermissionService",
    "Resolution",
    "Rule",
    "RuleError",
    "RuleSet",
    "StaleEpochError",
    "UnknownGrantError",
    "UnknownRequestError",
    "Verdict",
    "decision_from_data",
    "epoch_from_settings",
    "rules_from_data",
    "rules_from_environment",
    "rules_from_file",
    "service_from_settings",
]
