"""Reproducible environment records: what produced a result, hashed into an environment revision id."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class Distribution:
    """An installed distribution as the sandbox's interpreter sees it; ``local`` ones came from a path."""

    name: str
    version: str
    local: bool = False


@attrs.frozen
class EnvironmentRecord:
    """Interpreter, platform, distributions, allow-listed variables and sandbox settings of an execution.

    ``revision`` is a digest of all of them: two executions with the same revision ran
    in the same environment under the same sandbox policy.
    """

    python_version: str
    implementation: str
    platform: str
    machine: str
    distributions: tuple[Distribution, ...]
    environment_variables: Mapping[str, str]
    sandbox: Mapping[str, Any]

    @classmethod
    def from_probe(
        cls, facts: Mapping[str, Any], *, environment_variables: Mapping[str, str], sandbox: Mapping[str, Any]
    ) -> EnvironmentRecord:
        """Build a record from the sandbox interpreter's probe output."""
        distributions = tuple(
            Distribution(str(d["name"]), str(d["version"]), bool(d.get("local", False))) for d in facts["distributions"]
        )
        return cls(
            python_version=str(facts["python_version"]),
            implementation=str(facts["implementation"]),
            platform=str(facts["platform"]),
            machine=str(facts["machine"]),
            distributions=tuple(sorted(distributions, key=lambda d: d.name.lower())),
            environment_variables=dict(sorted(environment_variables.items())),
            sandbox=dict(sandbox),
        )

    def to_json(self) -> dict[str, Any]:
        """JSON data of the record, without the revision."""
        return {
            "python_version": self.python_version,
            "implementation": self.implementation,
            "platform": self.platform,
            "machine": self.machine,
            "distributions": [attrs.asdict(d) for d in self.distributions],
            "environment_variables": dict(self.environment_variables),
            "sandbox": dict(self.sandbox),
        }

    @property
    def revision(self) -> str:
        """``env-`` and the first 16 hex digits of the SHA-256 of the record's canonical JSON."""
        canonical = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return "env-" + hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def summary(self) -> str:
        """One line for a governance section: how code runs here, and under which revision."""
        sandbox = self.sandbox
        if sandbox.get("mode") == "unsandboxed":
            how = "UNSANDBOXED (opted in with executor.allow_unsandboxed): no file-system or network isolation"
        else:
            network = "network allowed" if sandbox.get("network_allowed") else "no network"
            mounts = ", ".join(f"{m['name']} ({m['mode']})" for m in sandbox.get("mounts", [])) or "no mounts"
            how = f"{sandbox.get('mode')} sandbox, {network}, mounts: {mounts}"
        return f"code execution: {how}; environment {self.revision}"

    def requirements(self) -> str:
        """A requirements file that recreates the environment (``pip install -r``).

        Distributions installed from a local path cannot be pinned from an index; they
        are listed as comments so the file stays installable.
        """
        lines = [
            f"# environment revision {self.revision}",
            f"# {self.implementation} {self.python_version} on {self.platform}",
        ]
        for dist in self.distributions:
            pin = f"{dist.name}=={dist.version}"
            lines.append(f"# {pin}  (installed from a local path)" if dist.local else pin)
        return "\n".join(lines) + "\n"
