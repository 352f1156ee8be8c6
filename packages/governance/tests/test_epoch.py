"""Permission epochs: frozen content, stable ids, rotation, secret names only."""

from __future__ import annotations

import attrs
import pytest

from sciencediscovery.governance import EpochError, MountMode, NetworkPolicy, PermissionEpoch

MOUNTS = [{"name": "data", "path": "/srv/data", "mode": "read_only"}, {"name": "out", "path": "/srv/out"}]


def test_epoch_id_is_derived_from_content_and_revision() -> None:
    first = PermissionEpoch(mounts=MOUNTS, environment_revision="rev-1", secret_refs=["NCBI_API_KEY"])
    same = PermissionEpoch(mounts=list(reversed(MOUNTS)), environment_revision="rev-1", secret_refs=["NCBI_API_KEY"])
    assert first.epoch_id == same.epoch_id
    assert PermissionEpoch(mounts=MOUNTS, environment_revision="rev-2").epoch_id != first.epoch_id
    rotated = first.rotated()
    assert rotated.epoch_id != first.epoch_id
    assert rotated.revision == 1
    assert rotated.rotated().epoch_id not in {first.epoch_id, rotated.epoch_id}
    changed = first.rotated(network=NetworkPolicy(allow=["*.nih.gov"]))
    assert changed.network.allow == ("*.nih.gov",)


def test_epoch_is_frozen_and_describes_itself_as_plain_data() -> None:
    epoch = PermissionEpoch(mounts=MOUNTS, secret_refs=["NCBI_API_KEY"])
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        epoch.revision = 5  # type: ignore[misc]
    assert epoch.mount("data") is not None
    assert epoch.mount("data").mode is MountMode.READ_ONLY  # type: ignore[union-attr]
    assert epoch.mount("out").mode is MountMode.READ_ONLY  # type: ignore[union-attr]  # the default mode
    described = epoch.describe()
    assert described["epoch_id"] == epoch.epoch_id
    assert described["secret_refs"] == ["NCBI_API_KEY"]
    assert described["network"]["default"] == "deny"  # an epoch without a network policy reaches nothing


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"mounts": [{"name": "a/b", "path": "/x", "mode": "read_only"}]}, "mounts"),
        ({"mounts": [{"name": "a", "path": "/x", "mode": "rw"}]}, "mounts"),
        ({"mounts": [{"path": "/x"}]}, "mounts"),
        ({"mounts": [{"name": "a", "path": "/x"}, {"name": "a", "path": "/y"}]}, "mounts"),
        ({"secret_refs": {"NCBI_API_KEY": "abc123"}}, "secret_refs"),
        ({"secret_refs": ["sk-live 1234 secret value"]}, "secret_refs"),
        ({"secret_refs": "NCBI_API_KEY"}, "secret_refs"),
    ],
)
def test_invalid_epoch_fields_are_typed_errors(changes: dict, field: str) -> None:
    with pytest.raises(EpochError) as raised:
        PermissionEpoch(**changes)
    assert raised.value.field == field


def test_rotation_rejects_unknown_fields() -> None:
    with pytest.raises(EpochError, match="epoch_id"):
        PermissionEpoch().rotated(epoch_id="mine")
