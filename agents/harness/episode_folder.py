"""An episode folder as files, for the tools that pin or copy recorded episodes (the
diagnostics lab's checkpoints and judge): the recorded screenshot hash at a step, and a copy
of the folder that shares its files' bytes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def recorded_frame_hash(lines: list[dict], step: int) -> str | None:
    """The recorded hash of the screenshot after step ``step`` (the last frame of the last
    action up to it; the header's before any), from an episode's events (read_events); None
    when nothing up to that step records one."""
    last = None
    for rec in lines:
        if rec.get("type") == "header":
            last = rec.get("frame")
        elif rec.get("stream") == "public" and "action" in rec and rec["step"] <= step and rec.get("frames"):
            last = rec["frames"][-1]
    return last


def copy_episode(src: str | Path, dest: Path) -> Path:
    """The episode folder ``src`` copied to ``dest`` (files hard-linked where the filesystem
    allows: no bytes duplicated; else copied). Its events digest is unchanged."""
    src = Path(src)
    dest.mkdir(parents=True)
    for p in sorted(src.iterdir()):
        if p.is_dir():
            shutil.copytree(p, dest / p.name)
            continue
        try:
            os.link(p, dest / p.name)
        except OSError:
            shutil.copy2(p, dest / p.name)
    return dest
