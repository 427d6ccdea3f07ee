"""What one row of a dataset holds: one agent step through the GUI.

A row is the frame the agent saw, the action it took (in frame pixels and in the model
conventions), what the action did to the game and where the episode stood after it. The
same columns are written in every shard format (shards.py): Parquet columns, or the
``.json`` member beside the ``.png`` of a WebDataset sample.

Columns (``COLUMNS``: name -> (type, meaning)); "list<str>" is a list of strings, "?" may
be null. The opening wait of an objective episode has no frame (the agent sees nothing
before it) and is not a row: an episode's rows start at harness step 2.
"""

from __future__ import annotations

from longpuzzle.agents.harness.frames import WHOLE_FRAME_HASH

# 2: rows' frame hashes are the harness's FRAME_HASH (agents/harness/frames.py, "xxh3-128-b32"),
# which the manifest names (``frame_hash``); 1: the whole-frame "xxh3-128", not named
FORMAT = "longpuzzle-dataset/2"
FORMATS = ("longpuzzle-dataset/1", FORMAT)         # what read_manifest reads
OLD_FRAME_HASH = WHOLE_FRAME_HASH                  # the frame hash of a manifest that names none
CONVENTIONS = ("general_e2e", "qwen", "uitars")    # agents/models protocols with a text action format

COLUMNS: dict[str, tuple[str, str]] = {
    "key": ("str", "unique sample key '<episode>-s<step>' (the WebDataset __key__)"),
    "episode": ("str", "episode id (manifest 'episodes')"),
    "step": ("int32", "the harness's action number in the episode (1 is the opening wait, so rows start at 2)"),
    "index": ("int32", "0-based row number within the episode"),
    "objective": ("str", "game/difficulty the episode plays"),
    "game": ("str", "the objective's game"),
    "style": ("str", "frame style, 2d or 3d"),
    "scale": ("float64", "frame scale (the frame is 540 x 960 times scale, or the viewport)"),
    "width": ("int32", "frame width in pixels"),
    "height": ("int32", "frame height in pixels"),
    "image": ("binary", "the frame the agent saw before the action: a lossless 8-bit RGB PNG"),
    "frame_hash": ("str", "the hash of the frame's pixels, 32 hex digits: the harness's frame hash, which the "
                          "manifest's frame_hash names (xxh3-128-b32: xxh3-128 over the digests of 32-row bands)"),
    "screen": ("str", "what the frame shows: home, difficulty or level"),
    "level": ("str?", "the level on screen before the action (id game/difficulty/n), null on menus"),
    "action": ("str", "the GUI action in frame pixels as the harness dispatched it (JSON, defaults filled in)"),
    "action_general_e2e": ("str?", "the action as the original built-in agent writes it: its JSON action on the "
                                   "0..1000 grid (null if that format cannot express it)"),
    "action_qwen": ("str?", "the action as a Qwen-VL computer_use tool call (JSON, 0..1000 grid), or null"),
    "action_uitars": ("str?", "the action as a UI-TARS Action: call, pixels of the smart_resize'd image, or null"),
    "variety": ("str?", "why the agent left its plan on this step: detour or restart (null: it followed it)"),
    "effect": ("str", "what the action did: move, rejected, navigate, restart, undo, select, ... or nothing"),
    "moves": ("list<str>", "the moves it made on the board (the game's move text), in order"),
    "move_ids": ("list<int32>", "the same moves as the game's action numbers (the rules envs' Discrete actions)"),
    "rejected": ("list<str>", "moves the rules refused"),
    "P_before": ("float64?", "progress P of the level on screen before the action (null on menus)"),
    "P": ("float64?", "progress P after the action (null on menus)"),
    "solved": ("bool", "the level on screen is solved after the action"),
    "win": ("bool", "this action won a target level of the objective for the first time"),
    "objective_complete": ("bool", "every target level of the objective is won after the action"),
    "feedback": ("str", "the public feedback the agent got (screen_changed, no_visible_effect, ...)"),
    "next_frame_hash": ("str", "hash of the frame after the action (the next row's frame_hash)"),
    "last": ("bool", "the episode's last row"),
}

# With ``oracle`` (DatasetConfig.oracle, ``longpuzzle dataset --oracle``): what the exact solvers
# know of the board the row's frame shows (solvers/oracle.py, issue 38) - process supervision
# beside the action. Optional because it costs time: each level's state graph once, then the
# best moves of every row's board (and levels too large for a graph: a search per state).
ORACLE_COLUMNS: dict[str, tuple[str, str]] = {
    "oracle_d": ("float64?", "d(s) of the board before the action: the fewest moves to win it, by the exact "
                             "oracle (inf on a certified dead end; null off a level or where only bounds are known)"),
    "oracle_dead_end": ("bool", "the board before the action is a certified dead end (false off a level)"),
    "oracle_best": ("list<str>", "the best next moves from the board before the action (extra cost 0; empty off "
                                 "a level, on a solved or lost board, or where only bounds are known)"),
    "oracle_best_ids": ("list<int32>", "the same best moves as the game's action numbers"),
    "oracle_cost": ("float64?", "the action's extra cost e(s, a) = its moves + d(after) - d(before): 0 on a "
                                "shortest path, k a detour of k moves, inf a fatal action (a solvable board "
                                "lost); null when it made no move, undid or restarted, left the level, was "
                                "played on a lost board, or d is known only by bounds"),
}

# the columns of the WebDataset .json member (everything but the image)
META_COLUMNS = tuple(c for c in COLUMNS if c != "image")


def columns(oracle: bool = False) -> dict[str, tuple[str, str]]:
    """The columns of a dataset's rows (with the oracle's where it was asked for)."""
    return {**COLUMNS, **ORACLE_COLUMNS} if oracle else COLUMNS


def manifest_frame_hash(manifest: dict) -> str:
    """The frame hash a manifest's rows were written with (OLD_FRAME_HASH if it names none)."""
    return manifest.get("frame_hash") or OLD_FRAME_HASH


def schema_doc(oracle: bool = False) -> list[dict]:
    """The columns as manifest entries: name, type, meaning."""
    return [{"name": k, "type": t, "description": d} for k, (t, d) in columns(oracle).items()]


def episode_key(n: int) -> str:
    """The id of the n-th planned episode (0-based): e00000, e00001, ..."""
    return f"e{n:05d}"


def sample_key(episode: str, step: int) -> str:
    return f"{episode}-s{step:06d}"
