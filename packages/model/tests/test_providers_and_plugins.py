"""Spec strings, the provider registry, the register_model_providers hook and its documentation."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from sciencediscovery.model import (
    Finish,
    ModelSpecError,
    ProviderContext,
    ProviderDefinition,
    ProviderModelClient,
    ProviderRegistrationError,
    ProviderRegistry,
    StreamPart,
    TextDelta,
    UnknownProviderError,
    hookspecs,
    parse_model_spec,
)
from sciencediscovery.model import plugin as model_plugin
from sciencediscovery.runtime_core import Message, ModelInput, hookimpl, make_plugin_manager

DOCS = Path(__file__).resolve().parents[3] / "docs" / "packages" / "model.md"


class EchoProvider:
    """A third-party provider: answers with its target and the last message."""

    name = "echo"

    def __init__(self, context: ProviderContext) -> None:
        self.model = context.spec.target

    async def stream(self, model_input: ModelInput) -> AsyncGenerator[StreamPart, None]:
        yield TextDelta(f"{self.model}: {model_input.messages[-1].content}")
        yield Finish("stop")


class EchoPlugin:
    @hookimpl
    def register_model_providers(self, register):
        register(ProviderDefinition("echo", EchoProvider, "repeats the input"))


def test_builtin_providers_register_through_the_hook():
    manager = make_plugin_manager(load_entry_points=False, plugins=[model_plugin])
    assert ProviderRegistry.from_plugin_manager(manager).names == ("anthropic", "openai", "scripted")


def test_the_entry_point_registers_the_builtin_providers():
    manager = make_plugin_manager(environ={"SCIENCEDISCOVERY_LOAD_PLUGINS": "model"})
    assert {"anthropic", "openai", "scripted"} <= set(ProviderRegistry.from_plugin_manager(manager).names)


def test_a_third_party_plugin_adds_a_provider_selected_by_spec(turn):
    manager = make_plugin_manager(load_entry_points=False, plugins=[model_plugin, EchoPlugin()])
    client = ProviderModelClient.from_spec("echo:parrot", plugin_manager=manager, environ={})

    response = asyncio.run(client.complete(ModelInput("", [Message.user("hello")]), turn.context))

    assert response.message.content == "parrot: hello"
    assert response.model == "parrot"


def test_unknown_providers_are_typed_errors_listing_the_registered_ones():
    manager = make_plugin_manager(load_entry_points=False, plugins=[model_plugin])
    with pytest.raises(UnknownProviderError) as raised:
        ProviderModelClient.from_spec("gemini:pro", plugin_manager=manager, environ={})
    assert raised.value.available == ("anthropic", "openai", "scripted")
    assert "registered providers: anthropic, openai, scripted" in str(raised.value)


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", "Open AI:gpt-4o", ":gpt-4o"])
def test_malformed_specs_are_typed_errors_listing_the_registered_providers(spec):
    registry = ProviderRegistry(model_plugin.BUILTIN_PROVIDERS)
    with pytest.raises(ModelSpecError) as raised:
        registry.create(spec, environ={})
    assert raised.value.available == ("anthropic", "openai", "scripted")


def test_specs_split_at_the_first_colon_only():
    spec = parse_model_spec("openai:llama3.1:8b")
    assert (spec.provider, spec.target, str(spec)) == ("openai", "llama3.1:8b", "openai:llama3.1:8b")


def test_a_provider_name_registered_twice_is_rejected():
    with pytest.raises(ProviderRegistrationError, match="'scripted' is registered twice"):
        ProviderRegistry([*model_plugin.BUILTIN_PROVIDERS, model_plugin.BUILTIN_PROVIDERS[2]])
    with pytest.raises(ProviderRegistrationError, match="ProviderDefinition.name"):
        ProviderDefinition("Bad Name", EchoProvider)


def test_a_factory_that_builds_no_provider_is_a_registration_error():
    registry = ProviderRegistry([ProviderDefinition("broken", lambda context: object())])
    with pytest.raises(ProviderRegistrationError, match="'broken' built a object"):
        registry.create("broken:x", environ={})


def test_every_hook_is_documented_with_its_signature():
    text = DOCS.read_text(encoding="utf-8")
    hooks = [(name, fn) for name, fn in vars(hookspecs).items() if hasattr(fn, "sciencediscovery_spec")]
    assert hooks
    for name, function in hooks:
        signature = f"### {name}({', '.join(inspect.signature(function).parameters)})"
        assert re.search(rf"^{re.escape(signature)}$", text, re.MULTILINE), f"{signature} missing from {DOCS}"
