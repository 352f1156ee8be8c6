"""Check that each distribution imports exactly the ScienceDiscovery packages its pyproject declares.

deptry checks third-party dependencies, but every distribution here shares the
``sciencediscovery`` namespace, which deptry cannot split. This script derives
one import-linter ``forbidden`` contract per distribution from its pyproject
(every sibling it does not declare is forbidden) and lets import-linter do the
import analysis; a declared sibling that is never imported is reported too, unless
the pyproject lists it under ``[tool.sciencediscovery] plugin-dependencies`` (the
service installs capability plugins it never imports).
Run from the repository root inside an environment holding all packages
(``nox -s architecture``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "sciencediscovery-"


def plugin_only(pyproject: Path) -> set[str]:
    """Distributions a pyproject installs only for their entry-point plugins (never imported)."""
    table = tomllib.loads(pyproject.read_text()).get("tool", {}).get("sciencediscovery", {})
    return {name.lower() for name in table.get("plugin-dependencies", [])}


def distributions() -> dict[str, tuple[str, set[str]]]:
    """Distribution name -> (import name, declared and imported sciencediscovery distributions)."""
    found = {}
    for pyproject in sorted([*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("services/*/pyproject.toml")]):
        project = tomllib.loads(pyproject.read_text())["project"]
        module_dirs = [p.name for p in (pyproject.parent / "src" / "sciencediscovery").iterdir() if p.is_dir()]
        declared = {
            re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()
            for requirement in project.get("dependencies", [])
        }
        imported = {d for d in declared if d.startswith(PREFIX)} - plugin_only(pyproject)
        found[project["name"]] = (f"sciencediscovery.{module_dirs[0]}", imported)
    return found


def contracts(found: dict[str, tuple[str, set[str]]]) -> str:
    modules = sorted(module for module, _ in found.values())
    lines = ["[importlinter]", "root_packages =", *(f"    {m}" for m in modules), ""]
    for name, (module, declared) in sorted(found.items()):
        allowed = {module} | {found[d][0] for d in declared if d in found}
        forbidden = [m for m in modules if m not in allowed]
        if not forbidden:
            continue
        lines += [
            f"[importlinter:contract:{name}]",
            f"name = {name} imports only the ScienceDiscovery distributions its pyproject declares",
            "type = forbidden",
            f"source_modules = {module}",
            "forbidden_modules =",
            *(f"    {m}" for m in forbidden),
            "allow_indirect_imports = True",
            "",
        ]
    return "\n".join(lines)


def unused(found: dict[str, tuple[str, set[str]]]) -> list[str]:
    """Declared sibling distributions that the declaring distribution never imports."""
    import grimp  # installed with import-linter

    graph = grimp.build_graph(*sorted(module for module, _ in found.values()))
    return [
        f"{name} declares {dependency} but never imports {found[dependency][0]}"
        for name, (module, declared) in sorted(found.items())
        for dependency in sorted(declared)
        if not graph.direct_import_exists(importer=module, imported=found[dependency][0], as_packages=True)
    ]


def main() -> int:
    found = distributions()
    unknown = {d for _, declared in found.values() for d in declared} - set(found)
    if unknown:
        print(f"declared dependencies that are not distributions of this repository: {sorted(unknown)}")
        return 1
    problems = unused(found)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "declared-imports.ini"
        config.write_text(contracts(found))
        return subprocess.call(["lint-imports", "--config", str(config)], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
