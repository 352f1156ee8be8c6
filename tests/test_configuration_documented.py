"""Every environment variable the code reads is listed in docs/configuration.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATTERN = re.compile(
    r'"((?:SCIENCE_AGENT|SCIENCEDISCOVERY)_[A-Z_]*[A-Z]|MODEL_[A-Z_]+|OUTPUT_RESERVE_TOKENS|'
    r'(?:OPENAI|ANTHROPIC)_[A-Z_]+|TIKTOKEN_CACHE_DIR)"'
)


def test_every_variable_is_documented() -> None:
    sources = [*ROOT.glob("packages/*/src/**/*.py"), *ROOT.glob("services/*/src/**/*.py")]
    used = {name for path in sources for name in PATTERN.findall(path.read_text())}
    documented = (ROOT / "docs" / "configuration.md").read_text()
    missing = sorted(name for name in used if f"`{name}`" not in documented)
    assert used, "the scan found no variables at all"
    assert missing == []
