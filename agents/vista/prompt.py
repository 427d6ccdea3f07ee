"""The player prompt for tool-using agents (PAPERS.md section 4, B.2): the permitted
information, the action interface with its bounds, the procedure, and the ending - no rules
and no strategies. The MCP server sends it as its instructions; model agents get it as
their system prompt, and the task as the first user message."""

from __future__ import annotations

from longpuzzle.engine.gui import NAMED_KEYS

SETTING_NAMES = {"native": "Native GUI Actions (coordinate input only)",
                 "vista": "VISTA harness (coordinate input, plus tools to look again at archived frames, read "
                          "pixels, read the history of your turns and keep notes)",
                 "code": "Code Execution CUA (coordinate input, plus Python code over the screenshots; every "
                         "change to the game still goes through GUI input)"}


def player_prompt(setting: str, tools: tuple[str, ...], frame_size: tuple[int, int], batch: bool = True) -> str:
    """``batch``: whether play takes a batch of actions (the Controller's batch)."""
    w, h = frame_size
    extra = []
    if "inspect" in tools:
        extra.append("`inspect` returns enlarged crops of any frame you were shown, including the intermediate "
                     "animation frames of each turn (archived losslessly, indexed by turn and frame number)")
    if "read_pixels" in tools:
        extra.append("`read_pixels` samples a region of an archived frame as a grid of pixel values")
    if "history" in tools:
        extra.append("`history` returns the exact record of your turns, or one summary per attempt at the "
                     "current level")
    if "write_guide" in tools:
        extra.append("GUIDE.md (`read_guide` / `write_guide`) keeps durable knowledge for the whole episode; "
                     "WORKING.md (`read_working` / `write_working`) is the scratchpad of the current level and is "
                     "cleared when another level is on screen; `save_compact_checkpoint` saves both before your "
                     "context is compacted, and when your context is nearly full the other tools wait until you "
                     "have called it")
    if "run_python" in tools:
        extra.append("`run_python` runs your Python code in a persistent process of your own with the archived "
                     "frames as numpy arrays and gui(action, x, y), which sends GUI actions exactly as play does")
    tools_text = ("Other tools: " + "; ".join(extra) + ".\n\n") if extra else ""
    return (
        "You are playing games in a Game Suite shown on a screen, through GUI input only.\n\n"
        "Permitted information: only what the returned screenshots show (and what the tools derive from them). "
        "You have no access to the game's source or bundled assets, level catalogues, answer files, DOM or "
        "accessibility data, page variables, hidden state, evaluator outputs, or any external retrieval.\n\n"
        "Action interface: the `play` tool performs exactly one GUI action" + (
            ", or one batch of actions run in order," if batch else "") + " and returns a screenshot after the "
        "(last) action and the actions available now. An action is its name with its fields, e.g. play(action="
        "\"click\", x=10, y=20). Actions: click {x, y}, double_click {x, y}, drag "
        "{x0, y0, x1, y1} (optionally through waypoints 'via'), swipe {direction}, key {name}, typetext {text}, "
        "scroll {direction}, wait {ms}" + (", batch {actions}" if batch else "") + ". Coordinates are integer "
        "pixels of the "
        f"{w} x {h} screenshot, 0 <= x < {w} and 0 <= y < {h}, origin at the top-left. Keys: letters a-z, digits "
        f"0-9, {', '.join(NAMED_KEYS)}. The first action must be a wait: it returns the first screenshot and "
        "starts the clock. Send each play only after the previous one returned. `screenshot` shows the current "
        "screen again.\n\n" + tools_text +
        "Procedure: select the game and the difficulty through the visible interface and check the selection before "
        "you start. Use the visible undo or restart controls when you need them. Neither repeated failure nor "
        "elapsed time is a reason to stop: keep playing until the objective is complete. One time budget covers "
        "the whole objective, your own thinking included.\n\n"
        "Ending: once the screen shows that the whole objective is complete, call `final_answer` with one message "
        "that starts with `BENCHMARK COMPLETED` and names the visible evidence. Only the evaluator's own "
        "observations count as success.")


def task_text(instruction: str, game_title: str | None, difficulty_label: str | None, setting: str) -> str:
    """The task message: the goal, the game and difficulty with their on-screen labels, the setting."""
    where = f"The game is '{game_title}' on screen, difficulty '{difficulty_label}'." if game_title else ""
    return "\n".join(p for p in (instruction, where, f"Setting: {SETTING_NAMES[setting]}.") if p)
