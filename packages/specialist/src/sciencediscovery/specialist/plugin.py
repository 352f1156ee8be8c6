"""Entry-point plugin of sciencediscovery-specialist: the built-in specialists, their catalogue, the child relay."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciencediscovery.context import ContextContributorFactory
from sciencediscovery.orchestration import SpecialistDefinition
from sciencediscovery.orchestration import settings as orchestration_keys
from sciencediscovery.runtime_core import RunEventSink, hookimpl

from .builtins import builtin_specialists
from .catalogue import catalogue_factory
from .supervision import ChildEventRelay


@hookimpl
def register_specialists(register: Callable[[SpecialistDefinition], None], settings: Mapping[str, Any]) -> None:
    """The four built-ins: literature scout, data analyst, methods comparer, evidence reviewer."""
    for specialist in builtin_specialists():
        register(specialist)


@hookimpl
def register_context_contributors(
    register: Callable[[ContextContributorFactory], None], settings: Mapping[str, Any]
) -> None:
    """The specialist catalogue (capabilities slot), from the run's prepared specialist table."""
    register(catalogue_factory(orchestration_keys.specialists(settings)))


@hookimpl
def register_event_sinks(register: Callable[[RunEventSink], None], settings: Mapping[str, Any]) -> None:
    """The relay that lets a supervising :class:`SpecialistRunner` see its child run's external waits."""
    register(ChildEventRelay())
