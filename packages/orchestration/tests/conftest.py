from __future__ import annotations

from pathlib import Path

import pytest

LITERATURE_BODY = """# Systematic literature review

1. Search PubMed and preprint servers with explicit inclusion criteria.
2. Screen titles and abstracts; record every exclusion reason.
3. Synthesize findings per mechanism; cite every claim and state uncertainty.
"""


def write_skill(root: Path, name: str, description: str, body: str, *, version: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    version_line = f"version: {version}\n" if version else ""
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{version_line}---\n{body}")
    return folder


@pytest.fixture(name="write_skill")
def write_skill_fixture():
    return write_skill


@pytest.fixture(name="literature_body")
def literature_body_fixture() -> str:
    return LITERATURE_BODY


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "literature-review", "Systematic literature review", LITERATURE_BODY, version='"1.0.0"')
    write_skill(root, "assay-comparison", "Compare assay methods", "Tabulate both methods side by side.\n")
    (root / "literature-review" / "checklist.md").write_text("- PRISMA flow\n")
    return root
