from __future__ import annotations

import pytest

from sciencediscovery.runtime_core import (
    CollectingSink,
    DuplicatePortError,
    FrozenRegistryError,
    MissingPortsError,
    PortTypeError,
    RuntimeBuilder,
)
from sciencediscovery.runtime_core.testing import FunctionDispatcher, ListModelClient, PassThroughAssembler


def test_build_lists_every_missing_port():
    builder = RuntimeBuilder().model_client(ListModelClient([]))
    with pytest.raises(MissingPortsError) as caught:
        builder.build()
    assert caught.value.missing == ["context_assembler", "tool_dispatcher", "event_sink"]
    assert "context_assembler, tool_dispatcher, event_sink" in str(caught.value)


def complete_builder() -> RuntimeBuilder:
    return (
        RuntimeBuilder()
        .context_assembler(PassThroughAssembler())
        .model_client(ListModelClient([]))
        .tool_dispatcher(FunctionDispatcher({}))
        .event_sink(CollectingSink())
    )


def test_registry_is_frozen_after_build():
    builder = complete_builder()
    runtime = builder.build()
    with pytest.raises(FrozenRegistryError, match="already built"):
        builder.event_sink(CollectingSink())
    with pytest.raises(TypeError):
        runtime.ports["event_sink"] = CollectingSink()  # type: ignore[index]
    assert set(runtime.ports) == {"context_assembler", "model_client", "tool_dispatcher", "event_sink"}


def test_duplicate_registration_is_rejected():
    builder = RuntimeBuilder().event_sink(CollectingSink())
    with pytest.raises(DuplicatePortError, match="event_sink is already registered"):
        builder.event_sink(CollectingSink())


def test_wrong_port_type_names_port_and_type():
    with pytest.raises(PortTypeError, match="model_client must implement ModelClient; CollectingSink does not"):
        RuntimeBuilder().model_client(CollectingSink())  # type: ignore[arg-type]


def test_synchronous_port_method_is_rejected():
    class SyncAssembler:
        def assemble(self, request):
            return None

    with pytest.raises(PortTypeError, match="assemble must be an async method"):
        RuntimeBuilder().context_assembler(SyncAssembler())  # type: ignore[arg-type]
