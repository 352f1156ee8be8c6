"""Runs first inside the sandbox, with the sandbox's interpreter (never imported by the executor).

``python -s -B -c <this source> <json>``: applies the resource limits as hard limits, then
runs a script read from stdin (``script``), replaces itself with the ipykernel command it was given (``kernel``)
or writes the interpreter's environment facts to ``environment.json`` (``probe``).
"""

import json
import os
import resource
import sys
import traceback
from typing import Any

_RLIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nproc": resource.RLIMIT_NPROC,
    "core": resource.RLIMIT_CORE,
}


def _apply_limits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        soft, hard = (value, value + 1) if name == "cpu" else (value, value)
        resource.setrlimit(_RLIMITS[name], (soft, hard))


def _save_open_figures(output_dir: str) -> None:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in pyplot.get_fignums():
        path = os.path.join(output_dir, f"figure-{number}.png")
        if not os.path.exists(path):
            pyplot.figure(number).savefig(path)


def _run_script(config: dict[str, Any]) -> None:
    source = sys.stdin.buffer.read().decode("utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(compile(source, "<run_code>", "exec"), namespace)
    except SystemExit:
        raise
    except BaseException as error:  # report the user's traceback without this file's frame
        frames = error.__traceback__.tb_next if error.__traceback__ else None
        traceback.print_exception(type(error), error, frames)
        raise SystemExit(1) from None
    _save_open_figures(config["output_dir"])


def _probe(config: dict[str, Any]) -> None:
    import importlib.metadata
    import platform

    distributions: dict[str, dict[str, Any]] = {}
    for dist in importlib.metadata.distributions():
        name = str(dist.metadata["Name"] or "")
        if name and name.lower() not in distributions:
            direct_url = dist.read_text("direct_url.json")
            local = direct_url is not None and str(json.loads(direct_url).get("url", "")).startswith("file:")
            distributions[name.lower()] = {"name": name, "version": dist.version, "local": local}
    facts = {
        "python_version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "distributions": sorted(distributions.values(), key=lambda d: d["name"].lower()),
    }
    with open(os.path.join(config["output_dir"], "environment.json"), "w") as file:
        json.dump(facts, file)


def main() -> None:
    config = json.loads(sys.argv[1])
    _apply_limits(config["limits"])
    mode = config["mode"]
    if mode == "script":
        _run_script(config)
    elif mode == "kernel":
        os.execv(config["argv"][0], config["argv"])
    elif mode == "probe":
        _probe(config)
    else:
        raise SystemExit(f"unknown bootstrap mode {mode!r}")


if __name__ == "__main__":
    main()
