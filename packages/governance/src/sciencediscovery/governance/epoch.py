"""Permission epochs: a frozen snapshot of what a run may do.

An epoch holds the workspace mounts and their modes, the network policy, the
environment revision (an opaque id from the executor) and secret references
(names only, never values). Its id is derived from its content and its
revision number, so the same configuration restarts into the same epoch (and
project grants survive a restart) while :meth:`PermissionEpoch.rotated`
always produces a new id, which invalidates every grant made before. The
permission service records each retired epoch in its audit file and never
resumes one, so a rotation also survives restarts.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .errors import EpochError
from .network import NetworkPolicy

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
_SECRET = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:/\-]{0,127}$")


class MountMode(enum.StrEnum):
    READ_ONLY = "read_only"
    READ_WRITE = "read_write"


@attrs.frozen
class EpochMount:
    """A workspace mount as governance sees it: name, host path and mode."""

    name: str = attrs.field()
    path: str = attrs.field()
    mode: MountMode = attrs.field(converter=MountMode)

    @name.validator
    def _check_name(self, _attribute: object, value: str) -> None:
        if not isinstance(value, str) or not _NAME.match(value):
            raise EpochError("mounts", f"mount name {value!r} must be letters, digits, _ . - (no slashes)")


def _mounts(values: Iterable[EpochMount | Mapping[str, Any]]) -> tuple[EpochMount, ...]:
    mounts = []
    for value in values:
        if isinstance(value, EpochMount):
            mounts.append(value)
            continue
        try:
            mounts.append(EpochMount(name=value["name"], path=str(value["path"]), mode=value.get("mode", "read_only")))
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, EpochError):
                raise
            raise EpochError("mounts", f"{value!r} needs name, path and mode read_only|read_write ({error})") from None
    names = [mount.name for mount in mounts]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise EpochError("mounts", f"duplicate mount name {duplicates[0]!r}")
    return tuple(sorted(mounts, key=lambda mount: mount.name))


def _secrets(values: Iterable[str]) -> tuple[str, ...]:
    if isinstance(values, str | Mapping):
        raise EpochError("secret_refs", "must be a list of secret names (never a mapping of values)")
    names = tuple(sorted(set(values)))
    for name in names:
        if not isinstance(name, str) or not _SECRET.match(name):
            raise EpochError("secret_refs", f"{name!r} is not a secret name (letters, digits, _ . : / -; max 128)")
    return names


@attrs.frozen
class PermissionEpoch:
    """What a run may do, frozen. ``epoch_id`` changes with the content and on every rotation."""

    mounts: tuple[EpochMount, ...] = attrs.field(default=(), converter=_mounts)
    network: NetworkPolicy = attrs.field(factory=NetworkPolicy.deny_all)
    environment_revision: str | None = None
    secret_refs: tuple[str, ...] = attrs.field(default=(), converter=_secrets)
    revision: int = 0
    epoch_id: str = attrs.field(init=False)

    @epoch_id.default
    def _derive_id(self) -> str:
        digest = hashlib.sha256(json.dumps(self._content(), sort_keys=True).encode()).hexdigest()
        return f"epoch-{self.revision}-{digest[:16]}"

    def _content(self) -> dict[str, Any]:
        return {
            "mounts": [{"name": m.name, "path": m.path, "mode": m.mode.value} for m in self.mounts],
            "network": self.network.describe(),
            "environment_revision": self.environment_revision,
            "secret_refs": list(self.secret_refs),
            "revision": self.revision,
        }

    def rotated(self, **changes: Any) -> PermissionEpoch:
        """The next epoch: optional field changes and a higher revision (so always a new id)."""
        unknown = sorted(set(changes) - {"mounts", "network", "environment_revision", "secret_refs"})
        if unknown:
            raise EpochError(unknown[0], "is not a field of a permission epoch")
        return attrs.evolve(self, revision=self.revision + 1, **changes)

    def mount(self, name: str) -> EpochMount | None:
        return next((mount for mount in self.mounts if mount.name == name), None)

    def describe(self) -> dict[str, Any]:
        """Plain data for the governance context section (no secret values exist here to leak)."""
        return {"epoch_id": self.epoch_id, **self._content()}
