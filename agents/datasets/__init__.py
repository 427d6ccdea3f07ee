"""GUI trajectories as training data: agents play through the GUI, every step becomes a row.

    from longpuzzle.agents.datasets import DatasetConfig, build, check_dataset, read_rows
    m = build("data/mp", DatasetConfig(objectives=["maze_paint/hard"], episodes=10, detours=0.05))
    check_dataset("data/mp")["ok"]

The modules, one job each:

    schema.py       the row's columns and what they mean; the format name
    agents.py       the agents that play, with detours, restarts and per-move gestures
    collect.py      one episode played through the objective protocol, each step labelled
    conventions.py  a frame-pixel action in the model conventions (general_e2e, Qwen-VL, UI-TARS)
    writer.py       the writer thread: PNG, frame hash, conventions, rows into shards
    shards.py       Parquet and WebDataset shard files, written and read back
    build.py        the plan, jobs (any agents.runner backend, Ray included), resume, manifest
    check.py        a dataset against its manifest and a replay of its episodes
    cli.py          ``longpuzzle dataset`` and ``longpuzzle dataset-check``
"""

_EXPORTS = {"DatasetConfig": "build", "build": "build", "read_manifest": "build", "check_dataset": "check",
            "read_rows": "shards", "DatasetError": "shards", "COLUMNS": "schema", "FORMAT": "schema"}


def __getattr__(name):
    if name in _EXPORTS:
        import importlib
        return getattr(importlib.import_module(f"longpuzzle.agents.datasets.{_EXPORTS[name]}"), name)
    raise AttributeError(name)


__all__ = sorted(_EXPORTS)
