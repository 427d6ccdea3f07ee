"""The agent's notes: GUIDE.md (durable knowledge, kept for the whole episode, optionally
seeded from a file) and WORKING.md (the scratchpad of the current level), in the episode
folder's ``notes/``. Each has a size cap; a write over the cap is refused and the old text
stays. WORKING.md is cleared when the screen shows a level other than the last level it
showed - the level advanced (history.level_key: the game, difficulty and level number its
header shows; menus in between change nothing)."""

from __future__ import annotations

import os
from pathlib import Path

from longpuzzle.agents.vista.tools import NOTES_CAP

GUIDE, WORKING = "GUIDE.md", "WORKING.md"


class NotesError(ValueError):
    pass


class Notes:
    def __init__(self, folder: Path | None, guide: str = "", cap: int = NOTES_CAP):
        self.dir = Path(folder) / "notes" if folder is not None else None
        self.cap = cap
        self.text = {GUIDE: "", WORKING: ""}
        self.level = None                    # the level WORKING.md belongs to
        if guide:
            self.write(GUIDE, guide)
        elif self.dir is not None:
            self._save(GUIDE)
            self._save(WORKING)

    def read(self, name: str) -> str:
        return self.text[name]

    def write(self, name: str, text) -> int:
        if not isinstance(text, str):
            raise NotesError(f"{name} text must be a string, not {type(text).__name__}")
        if len(text) > self.cap:
            raise NotesError(f"{name} holds at most {self.cap} characters; this text has {len(text)} "
                             f"(nothing was written)")
        self.text[name] = text
        self._save(name)
        return len(text)

    def on_screen(self, level) -> bool:
        """The screen shows ``level`` (a level key, or None for a menu); True when that
        cleared WORKING.md (a level other than the last one shown)."""
        if level is None or level == self.level:
            return False
        cleared = self.level is not None and self.text[WORKING] != ""
        self.level = level
        if cleared:
            self.text[WORKING] = ""
            self._save(WORKING)
        return cleared

    def _save(self, name: str) -> None:
        if self.dir is None:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / (name + ".tmp")
        tmp.write_text(self.text[name], encoding="utf-8")
        os.replace(tmp, self.dir / name)
