from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sciencediscovery.orchestration import (
    DuplicateSkillError,
    SkillFormatError,
    SkillLibrary,
    UnknownSkillError,
    load_skill,
    skill_folders,
)
from sciencediscovery.runtime_core import ConfigurationError


def test_folder_is_parsed_with_front_matter_body_and_files(skills_dir: Path, literature_body: str) -> None:
    skill = load_skill(skills_dir / "literature-review")
    assert (skill.name, skill.description, skill.version) == (
        "literature-review",
        "Systematic literature review",
        "1.0.0",
    )
    assert skill.body == literature_body
    assert skill.files == ("checklist.md",)
    assert len(skill.content_hash) == 64


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter\n", "must start with YAML front matter"),
        ("---\nname: x\n", "no closing"),
        ("---\nname: [unclosed\n---\nbody\n", "not valid YAML"),
        ("---\n- a list\n---\nbody\n", "must be a YAML mapping"),
        ("---\ndescription: d\n---\nbody\n", "'name' must be a non-empty string"),
        ("---\nname: broken\n---\nbody\n", "'description' must be a non-empty string"),
        ("---\nname: Broken_Name\ndescription: d\n---\nbody\n", "lowercase"),
        ("---\nname: other\ndescription: d\n---\nbody\n", "must match its folder name"),
        ("---\nname: broken\ndescription: d\nversion: [1]\n---\nbody\n", "'version' must be a string"),
        ("---\nname: broken\ndescription: d\n---\n\n", "no instructions"),
    ],
)
def test_malformed_skill_is_an_error_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_text(text)
    with pytest.raises(SkillFormatError, match=message) as caught:
        load_skill(folder)
    assert caught.value.path == folder / "SKILL.md"
    assert str(folder / "SKILL.md") in str(caught.value)


def test_version_may_come_from_metadata(tmp_path: Path) -> None:
    folder = tmp_path / "meta"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: meta\ndescription: d\nmetadata:\n  version: 2.1\n---\nDo it.\n")
    assert load_skill(folder).version == "2.1"


def test_discovery_and_duplicates(tmp_path: Path, skills_dir: Path, write_skill) -> None:
    assert [p.name for p in skill_folders([skills_dir])] == ["assay-comparison", "literature-review"]
    assert skill_folders([skills_dir / "literature-review"]) == [skills_dir / "literature-review"]
    with pytest.raises(ConfigurationError, match=r"skill_dirs\[1\]"):
        skill_folders([skills_dir, tmp_path / "nowhere"])
    other = tmp_path / "other"
    write_skill(other, "literature-review", "Another copy", "Body.\n")
    with pytest.raises(DuplicateSkillError, match="literature-review"):
        SkillLibrary([*skill_folders([skills_dir]), other / "literature-review"])


def test_a_run_keeps_its_frozen_revision_while_files_change(skills_dir: Path, literature_body: str) -> None:
    library = SkillLibrary(skill_folders([skills_dir]))
    first = library.read("run-1", "literature-review")
    assert first.reference.revision == 1
    assert first.render().count(literature_body.strip()) == 1

    (skills_dir / "literature-review" / "checklist.md").write_text("- PRISMA flow\n- GRADE\n")
    again = library.read("run-1", "literature-review")
    assert again == first

    later = library.read("run-2", "literature-review")
    assert later.reference.revision == 2
    assert later.reference.hash != first.reference.hash
    assert library.read("run-1", "literature-review").reference.revision == 1


def test_hash_covers_skill_md_and_files(skills_dir: Path) -> None:
    folder = skills_dir / "literature-review"
    digest = hashlib.sha256()
    for name in ("SKILL.md", "checklist.md"):
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    assert load_skill(folder).content_hash == digest.hexdigest()


def test_unknown_skill_lists_what_exists(skills_dir: Path) -> None:
    library = SkillLibrary(skill_folders([skills_dir]))
    with pytest.raises(UnknownSkillError, match="assay-comparison, literature-review"):
        library.read("run-1", "protein-folding")


def test_catalog_is_read_once_and_reads_fail_clearly_if_the_file_breaks(skills_dir: Path) -> None:
    library = SkillLibrary(skill_folders([skills_dir]))
    (skills_dir / "assay-comparison" / "SKILL.md").write_text("oops\n")
    assert [s.name for s in library.skills] == ["assay-comparison", "literature-review"]
    with pytest.raises(SkillFormatError, match="assay-comparison"):
        library.read("run-1", "assay-comparison")
