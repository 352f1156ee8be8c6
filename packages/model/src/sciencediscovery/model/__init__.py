"""Provider-neutral model client: OpenAI-compatible, Anthropic and scripted providers, retries, overflow normalization.

Build a client from a spec string::

    client = ProviderModelClient.from_spec("openai:gpt-4o")      # or anthropic:<model>, scripted:<path>

It implements runtime_core's ``ModelClient`` port. Importing this package never
imports a provider SDK; the SDKs are the ``openai``/``anthropic`` extras.
"""

from .client import ProviderModelClient
from .errors import (
    MissingExtraError,
    ModelAuthError,
    ModelBadRequestError,
    ModelConnectionError,
    ModelError,
    ModelRateLimitError,
    ModelResponseError,
    ModelServerError,
    ModelSpecError,
    ModelTimeoutError,
    ProviderError,
    ProviderRegistrationError,
    ScriptExhaustedError,
    ScriptFileError,
    UnknownProviderError,
)
from .events import ModelRetry, ModelStreamDelta
from .facts import KNOWN_FAMILIES, ModelFacts, ModelFamily, find_family, resolve_model_facts
from .overflow import is_context_overflow
from .provider import Provider, ProviderContext, ProviderDefinition
from .recorder import RecordedCall, RecordingModelClient
from .registry import ProviderRegistry
from .retry import RetryPolicy, parse_retry_after
from .script import Script, load_script, parse_script
from .scripted import ScriptedProvider
from .settings import ClientSettings
from .spec import ModelSpec, parse_model_spec
from .stream import Finish, StreamAccumulator, StreamPart, TextDelta, ToolCallDelta, UsageUpdate, parse_arguments
from .summary import CHECKPOINT_SUMMARY_PURPOSE, structural_summary

__all__ = [
    "CHECKPOINT_SUMMARY_PURPOSE",
    "KNOWN_FAMILIES",
    "ClientSettings",
    "Finish",
    "MissingExtraError",
    "ModelAuthError",
    "ModelBadRequestError",
    "ModelConnectionError",
    "ModelError",
    "ModelFacts",
    "ModelFamily",
    "ModelRateLimitError",
    "ModelResponseError",
    "ModelRetry",
    "ModelServerError",
    "ModelSpec",
    "ModelSpecError",
    "ModelStreamDelta",
    "ModelTimeoutError",
    "Provider",
    "ProviderContext",
    "ProviderDefinition",
    "ProviderError",
    "ProviderModelClient",
    "ProviderRegistrationError",
    "ProviderRegistry",
    "RecordedCall",
    "RecordingModelClient",
    "RetryPolicy",
    "Script",
    "ScriptExhaustedError",
    "ScriptFileError",
    "ScriptedProvider",
    "StreamAccumulator",
    "StreamPart",
    "TextDelta",
    "ToolCallDelta",
    "UnknownProviderError",
    "UsageUpdate",
    "find_family",
    "is_context_overflow",
    "load_script",
    "parse_script",
    "parse_arguments",
    "parse_model_spec",
    "parse_retry_after",
    "resolve_model_facts",
    "structural_summary",
]
