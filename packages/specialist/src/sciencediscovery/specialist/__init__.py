"""Built-in specialist definitions and the subagent lifecycle.

Specialists are data (:func:`load_specialists`, :func:`builtin_specialists`)
registered through orchestration's ``register_specialists`` hook. The
composition root wraps its child-run factory with :func:`supervise_child_runs`
(a :class:`SpecialistRunner`): lifecycle events, a concurrency cap, the
cancellation cascade and the output-contract check with one repair round.
"""

from .builtins import DATA_ANALYST, EVIDENCE_REVIEWER, LITERATURE_SCOUT, METHODS_COMPARER, builtin_specialists
from .catalogue import catalogue_factory, render_catalogue
from .contracts import JsonSchemaContract, OutputContract, RequiredSections, contract_from_mapping
from .definitions import (
    Specialist,
    load_specialists,
    output_contract,
    specialist_from_mapping,
    specialists_from_mapping,
)
from .errors import LifecycleError, SpecialistDefinitionError, SpecialistError
from .lifecycle import (
    TERMINAL_STATES,
    TRANSITIONS,
    SubagentBriefChecked,
    SubagentRecord,
    SubagentState,
    SubagentStateChanged,
    Transition,
)
from .runner import DEFAULT_MAX_CONCURRENT, SpecialistRunner
from .settings import MAX_CONCURRENT, supervise_child_runs
from .supervision import ChildEventRelay

__all__ = [
    "DATA_ANALYST",
    "DEFAULT_MAX_CONCURRENT",
    "EVIDENCE_REVIEWER",
    "LITERATURE_SCOUT",
    "MAX_CONCURRENT",
    "METHODS_COMPARER",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "ChildEventRelay",
    "JsonSchemaContract",
    "LifecycleError",
    "OutputContract",
    "RequiredSections",
    "Specialist",
    "SpecialistDefinitionError",
    "SpecialistError",
    "SpecialistRunner",
    "SubagentBriefChecked",
    "SubagentRecord",
    "SubagentState",
    "SubagentStateChanged",
    "Transition",
    "builtin_specialists",
    "catalogue_factory",
    "contract_from_mapping",
    "load_specialists",
    "output_contract",
    "render_catalogue",
    "specialist_from_mapping",
    "specialists_from_mapping",
    "supervise_child_runs",
]
