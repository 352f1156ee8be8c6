"""Development sessions. `python3 -m nox` runs lint, architecture, typecheck and tests."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["lint", "architecture", "typecheck", "tests"]

ROOT = Path(__file__).parent
DISTRIBUTION_DIRS = sorted(p.parent for p in ROOT.glob("packages/*/pyproject.toml")) + [ROOT / "services" / "api"]
SHARED_TIKTOKEN = ROOT.parent / "shared" / "tiktoken"


def _distribution(folder: Path) -> str:
    return tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"]


def _env(session: nox.Session) -> dict[str, str]:
    env = {"UV_PROJECT_ENVIRONMENT": session.virtualenv.location}
    if "TIKTOKEN_CACHE_DIR" not in os.environ and SHARED_TIKTOKEN.is_dir():
        env["TIKTOKEN_CACHE_DIR"] = str(SHARED_TIKTOKEN)
    return env


def _sync(session: nox.Session, *args: str) -> None:
    """Install from the committed uv.lock into this session's environment (exactly, nothing extra)."""
    session.run_install("uv", "sync", "--locked", *args, env=_env(session), external=True)


@nox.session
@nox.parametrize("target", [folder.name for folder in DISTRIBUTION_DIRS] + ["integration"])
def tests(session: nox.Session, target: str) -> None:
    """Each distribution's tests in an environment holding only it and its declared dependencies; then tests/."""
    if target == "integration":
        _sync(session, "--all-packages")
        path = "tests"
    else:
        folder = next(f for f in DISTRIBUTION_DIRS if f.name == target)
        _sync(session, "--package", _distribution(folder))
        path = str(folder.relative_to(ROOT) / "tests")
    session.run("pytest", path, *session.posargs, env=_env(session))


@nox.session
def architecture(session: nox.Session) -> None:
    """Import contracts, declared-vs-imported sibling packages, and deptry for third-party dependencies."""
    _sync(session, "--all-packages", "--group", "architecture")
    session.run("lint-imports", "--config", "importlinter.ini", env=_env(session))
    session.run("python", "tools/check_declared_imports.py", env=_env(session))
    siblings = "|".join(_distribution(folder) for folder in DISTRIBUTION_DIRS)
    for folder in DISTRIBUTION_DIRS:
        # siblings share the `sciencediscovery` namespace, which deptry cannot split: they are checked above
        session.chdir(folder)
        session.run(
            "deptry",
            ".",
            "--known-first-party",
            "sciencediscovery",
            "--per-rule-ignores",
            f"DEP002={siblings}",
            env=_env(session),
        )
    session.chdir(ROOT)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff==0.17.6")  # pinned: formatting must not change under CI between releases
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy over every distribution; strict on runtime_core (configured in pyproject.toml)."""
    _sync(session, "--all-packages", "--group", "typecheck")
    modules = [f"sciencediscovery.{folder.name}" for folder in DISTRIBUTION_DIRS]
    session.run("mypy", *[arg for module in modules for arg in ("-p", module)], env=_env(session))


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: the literature-review scenario end to end (scripted model, SQLite store, traces on)."""
    _sync(session, "--all-packages")
    scenario = ROOT / "examples" / "literature_review"
    output = ROOT / ".tmp" / "demo"
    session.run(
        "sciencediscovery",
        "run",
        "--objective",
        "Review current evidence about TP53 resistance mechanisms",
        "--constraint",
        "Use selected literature skill",
        "--constraint",
        "Do not execute ungoverned tools",
        "--output-requirement",
        "Cited summary",
        "--output-requirement",
        "State uncertainty",
        "--model",
        f"scripted:{scenario / 'script.json'}",
        "--skills",
        str(scenario / "skills"),
        "--workspace",
        str(scenario / "workspace"),
        "--data-dir",
        str(output / "data"),
        "--trace-dir",
        str(output / "traces"),
        *session.posargs,
        env=_env(session),
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks that print figures (never assertions on time)."""
    _sync(session, "--all-packages", "--group", "bench")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        session.run("python", str(script.relative_to(ROOT)), *session.posargs, env=_env(session))
