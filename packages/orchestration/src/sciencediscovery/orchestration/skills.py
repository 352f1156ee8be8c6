"""Agent Skills: folders holding ``SKILL.md`` (YAML front matter + body) and optional files.

The catalog (name + description) is read once when the library is built. A
run freezes a Skill the first time it reads it: later reads in the same run
return the same body, hash and revision even if the files changed on disk.
"""

from __future__ import annotations

import collections
import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from sciencediscovery.runtime_core import ConfigurationError

from .errors import DuplicateSkillError, SkillFormatError, UnknownSkillError

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
RUNS_KEPT = 256
"""How many runs' frozen Skill snapshots a library keeps (oldest runs are forgotten first)."""


@attrs.frozen
class SkillReference:
    """The durable reference a run keeps to the Skill revision it read."""

    id: str
    version: str | None
    revision: int
    hash: str
    description: str

    def to_json(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "hash": self.hash,
            "id": self.id,
            "revision": self.revision,
            "version": self.version,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SkillReference:
        return cls(
            id=str(data["id"]),
            version=None if data.get("version") is None else str(data["version"]),
            revision=int(data["revision"]),
            hash=str(data["hash"]),
            description=str(data["description"]),
        )


@attrs.frozen
class Skill:
    """One Skill as found on disk. ``content_hash`` covers SKILL.md and every other file."""

    name: str
    description: str
    version: str | None
    folder: Path
    body: str
    files: tuple[str, ...]
    content_hash: str


@attrs.frozen
class FrozenSkill:
    """A Skill as one run read it."""

    reference: SkillReference
    body: str
    files: tuple[str, ...]

    def render(self) -> str:
        """The ``read_skill`` result text: a header line, the body exactly once, then the file list."""
        ref = self.reference
        version = f"@{ref.version}" if ref.version else ""
        parts = [f"Skill {ref.id}{version} (revision {ref.revision}, sha256 {ref.hash}).", "", self.body.strip()]
        if self.files:
            parts += ["", "Files in this skill folder:", *(f"- {name}" for name in self.files)]
        return "\n".join(parts)


def _front_matter(path: Path, text: str) -> tuple[Mapping[str, Any], str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError(path, "must start with YAML front matter between '---' lines")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            header, body = "".join(lines[1:index]), "".join(lines[index + 1 :])
            break
    else:
        raise SkillFormatError(path, "front matter has no closing '---' line")
    try:
        data = yaml.safe_load(header)
    except yaml.YAMLError as error:
        raise SkillFormatError(path, f"front matter is not valid YAML: {error}") from error
    if not isinstance(data, Mapping):
        raise SkillFormatError(path, "front matter must be a YAML mapping with name and description")
    return data, body


def _field(path: Path, data: Mapping[str, Any], key: str, limit: int) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SkillFormatError(path, f"front matter field {key!r} must be a non-empty string, got {value!r}")
    if len(value) > limit:
        raise SkillFormatError(path, f"front matter field {key!r} is longer than {limit} characters")
    return value.strip()


def _version(path: Path, data: Mapping[str, Any]) -> str | None:
    metadata = data.get("metadata")
    value = data.get("version", metadata.get("version") if isinstance(metadata, Mapping) else None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float) or not str(value).strip():
        raise SkillFormatError(path, f"front matter field 'version' must be a string, got {value!r}")
    return str(value).strip()


def _folder_files(folder: Path) -> list[Path]:
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )


def load_skill(folder: str | Path) -> Skill:
    """Read one Skill folder; a malformed ``SKILL.md`` raises :class:`SkillFormatError` naming the file."""
    folder = Path(folder)
    path = folder / SKILL_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SkillFormatError(path, f"cannot be read: {error}") from error
    data, body = _front_matter(path, text)
    name = _field(path, data, "name", MAX_NAME)
    if not NAME_PATTERN.match(name):
        raise SkillFormatError(path, f"name {name!r} must be lowercase letters, digits and single hyphens")
    if name != folder.name:
        raise SkillFormatError(path, f"name {name!r} must match its folder name {folder.name!r}")
    description = _field(path, data, "description", MAX_DESCRIPTION)
    if not body.strip():
        raise SkillFormatError(path, "has no instructions after the front matter")
    digest = hashlib.sha256()
    files = []
    for file in _folder_files(folder):
        relative = file.relative_to(folder).as_posix()
        digest.update(relative.encode() + b"\0" + file.read_bytes() + b"\0")
        if relative != SKILL_FILE:
            files.append(relative)
    return Skill(name, description, _version(path, data), folder, body, tuple(files), digest.hexdigest())


def skill_folders(directories: Iterable[str | Path]) -> list[Path]:
    """Skill folders under each configured directory (a directory may itself be a Skill folder)."""
    found = []
    for index, directory in enumerate(directories):
        root = Path(directory)
        if not root.is_dir():
            raise ConfigurationError(f"skill_dirs[{index}]", f"{root} is not a directory")
        if (root / SKILL_FILE).is_file():
            found.append(root)
            continue
        found.extend(sorted(child for child in root.iterdir() if (child / SKILL_FILE).is_file()))
    return found


class SkillLibrary:
    """The Skills available to runs, and each run's frozen reads."""

    def __init__(self, folders: Iterable[str | Path]) -> None:
        skills: dict[str, Skill] = {}
        for folder in folders:
            skill = load_skill(folder)
            if skill.name in skills:
                raise DuplicateSkillError(skill.name, skills[skill.name].folder, skill.folder)
            skills[skill.name] = skill
        self._skills = dict(sorted(skills.items()))
        self._revisions: dict[str, list[str]] = {name: [skill.content_hash] for name, skill in skills.items()}
        self._runs: collections.OrderedDict[str, dict[str, FrozenSkill]] = collections.OrderedDict()

    @property
    def skills(self) -> tuple[Skill, ...]:
        """The catalog as discovered, sorted by name."""
        return tuple(self._skills.values())

    def read(self, run_id: str, name: str) -> FrozenSkill:
        """The run's frozen copy of ``name``, reading the folder on the run's first read."""
        frozen = self._runs.setdefault(run_id, {})
        self._runs.move_to_end(run_id)
        while len(self._runs) > RUNS_KEPT:
            self._runs.popitem(last=False)
        if name in frozen:
            return frozen[name]
        if name not in self._skills:
            raise UnknownSkillError(name, tuple(self._skills))
        skill = load_skill(self._skills[name].folder)
        hashes = self._revisions[name]
        if skill.content_hash not in hashes:
            hashes.append(skill.content_hash)
        reference = SkillReference(
            id=skill.name,
            version=skill.version,
            revision=hashes.index(skill.content_hash) + 1,
            hash=skill.content_hash,
            description=skill.description,
        )
        frozen[name] = FrozenSkill(reference, skill.body, skill.files)
        return frozen[name]
