"""Every hook of every installed package is documented (signature as heading) and exercised by a test."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from sciencediscovery.runtime_core import make_plugin_manager

ROOT = Path(__file__).resolve().parent.parent


def hookspecs() -> dict[str, str]:
    """Hook name -> signature text, for every hook the installed packages declare."""
    manager = make_plugin_manager(environ={})
    found = {}
    for name in dir(manager.hook):
        caller = getattr(manager.hook, name)
        if name.startswith("_") or caller.spec is None:
            continue
        parameters = list(inspect.signature(caller.spec.function).parameters)
        found[name] = f"{name}({', '.join(p for p in parameters if p != 'self')})"
    return found


def documented_headings() -> set[str]:
    headings = set()
    for page in [*(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "packages").glob("*.md")]:
        headings.update(re.findall(r"^###\s+`?([a-z_]+\([^)]*\))`?\s*$", page.read_text(), flags=re.MULTILINE))
    return headings


def test_core_hooks_exist():
    assert "add_hookspecs" in hookspecs()


@pytest.mark.parametrize("hook", sorted(hookspecs()))
def test_hook_is_documented_with_its_signature(hook):
    signature = hookspecs()[hook]
    assert signature in documented_headings(), f"docs/ has no '### {signature}' heading"


@pytest.mark.parametrize("hook", sorted(hookspecs()))
def test_hook_is_exercised_by_a_test(hook):
    test_files = [
        *ROOT.glob("packages/*/tests/**/*.py"),
        *ROOT.glob("services/*/tests/**/*.py"),
        *ROOT.glob("tests/*.py"),
    ]
    callers = [f for f in test_files if f.name != Path(__file__).name and re.search(rf"\b{hook}\b", f.read_text())]
    assert callers, f"no test mentions the hook {hook}"
