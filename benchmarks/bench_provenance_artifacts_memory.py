"""Provenance, artifact and memory costs: figures and ratios, never assertions.

- provenance: per-turn time of a 200-turn kernel run (one instant tool per turn) with a null sink,
  with the provenance sink, and with the sink plus model-input manifests; hashing the exact model
  input is proportional to its size (here up to ~400 messages), so the last figure grows with history;
- artifacts: registering 200 distinct 64 KiB files, then the same bytes again (dedup path);
- memory: 5,000 observations written, then full-text search and a 2,000-character snapshot.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from sciencediscovery.artifact_manager import ArtifactStore
from sciencediscovery.memory import Source, SQLiteMemoryGraph, render_snapshot
from sciencediscovery.provenance import event_sink, manifest_model_client
from sciencediscovery.runtime_core import Message, NullSink, RunRequest, RuntimeBuilder, ToolCall
from sciencediscovery.runtime_core.testing import FunctionDispatcher, ListModelClient, PassThroughAssembler, reply

TURNS = 200


async def _kernel(data_dir: Path | None, *, manifests: bool = True) -> float:
    script = [reply("", ToolCall(f"c{i}", "echo", {"i": i})) for i in range(TURNS)] + [reply("done")]

    async def echo(arguments, context) -> str:
        return "ok"

    model = ListModelClient(script)
    settings = {"data_dir": data_dir}
    builder = (
        RuntimeBuilder().context_assembler(PassThroughAssembler()).tool_dispatcher(FunctionDispatcher({"echo": echo}))
    )
    if data_dir is None:
        builder.model_client(model).event_sink(NullSink())
    else:
        builder.model_client(manifest_model_client(model, settings) if manifests else model)
        builder.event_sink(event_sink(settings))
    runtime = builder.build()
    started = time.perf_counter()
    await runtime.run(RunRequest("ctx", [Message.user("go")], max_turns=TURNS + 1))
    return (time.perf_counter() - started) / (TURNS + 1)


def provenance(root: Path) -> None:
    bare = statistics.median(asyncio.run(_kernel(None)) for _ in range(3))
    sink = statistics.median(asyncio.run(_kernel(root / f"sink{i}", manifests=False)) for i in range(3))
    full = statistics.median(asyncio.run(_kernel(root / f"full{i}")) for i in range(3))
    print(
        f"provenance: {bare * 1e6:8.1f} us/turn bare, {sink * 1e6:8.1f} us/turn with the sink "
        f"(+{(sink - bare) * 1e6:.1f} us), {full * 1e6:8.1f} us/turn with input manifests (x{full / bare:.1f})"
    )


def artifacts(root: Path) -> None:
    store = ArtifactStore(root / "artifacts")
    files = []
    for index in range(200):
        path = root / f"file{index}.bin"
        path.write_bytes(os.urandom(64 * 1024))
        files.append(path)
    started = time.perf_counter()
    for path in files:
        store.register_file(path)
    fresh = (time.perf_counter() - started) / len(files)
    started = time.perf_counter()
    for path in files:
        store.register_file(path, name=f"again-{path.name}")
    dedup = (time.perf_counter() - started) / len(files)
    print(
        f"artifacts:  {fresh * 1e3:8.2f} ms/register (64 KiB, new), {dedup * 1e3:8.2f} ms/register (dedup); "
        f"blobs stored: {store.count_blobs()}"
    )


def memory(root: Path) -> None:
    graph = SQLiteMemoryGraph(root / "memory.sqlite3")
    genes = ["TP53", "BRCA1", "EGFR", "KRAS", "MYC", "PTEN", "ALK", "BRAF"]
    started = time.perf_counter()
    for index in range(5000):
        gene = genes[index % len(genes)]
        graph.add_observation(
            gene,
            f"observation {index}: {gene} variant {index % 97} in cell line {index % 31}",
            Source(context_id=f"ctx{index % 10}"),
        )
    write = (time.perf_counter() - started) / 5000
    started = time.perf_counter()
    for _ in range(200):
        graph.search("KRAS variant 42", limit=10)
    search = (time.perf_counter() - started) / 200
    started = time.perf_counter()
    for _ in range(200):
        render_snapshot(graph, "ctx3", 2000)
    snapshot = (time.perf_counter() - started) / 200
    print(
        f"memory:     {write * 1e6:8.1f} us/write, {search * 1e3:8.2f} ms/search (5,000 observations), "
        f"{snapshot * 1e3:8.2f} ms/snapshot"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        provenance(root)
        artifacts(root)
        memory(root)
