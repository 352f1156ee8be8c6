"""Content hashes of what a run saw and produced: canonical JSON, SHA-256, hex."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from sciencediscovery.runtime_core import Message, ModelInput
from sciencediscovery.runtime_core.serialization import to_json


def canonical_json(value: Any) -> bytes:
    """``value`` as compact JSON with sorted keys (non-JSON leaves become their ``repr``)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr).encode()


def sha256_json(value: Any) -> str:
    """Hex SHA-256 of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def hash_model_input(model_input: ModelInput) -> str:
    """Hash of the exact model input, through the kernel's serialization."""
    return sha256_json(to_json(model_input))


def hash_arguments(arguments: Mapping[str, Any]) -> str:
    """Hash of a tool call's arguments."""
    return sha256_json(dict(arguments))


def hash_message(message: Message) -> str:
    """Hash of a history message (a tool result or a model output), through the kernel's serialization."""
    return sha256_json(to_json(message))
