"""What a replay derives itself instead of reading it from the folder: nothing in a recorded
episode that states game or evaluator state is taken on trust.

    header     everything an episode starts from follows from its protocol, its objective
               or level, its settings and the catalogue: the start state (the home screen,
               or the level launched directly), the evaluator's knowledge (nothing reached
               yet), the instruction, the first-wait rule. ``check_header`` builds it again
               and names the first field that differs, or a field the harness never writes.
    records    the fields each kind of record has (RECORD_FIELDS); a record with another
               field, or of a stream the harness does not write, is refused.
    result     the fields result.json may hold (RESULT_FIELDS): each is recomputed by the
               replay (replay.py) or, for real-time figures, checked for consistency.

A field added to what the harness writes must be added here, with how it is checked.
"""

from __future__ import annotations

import json

from longpuzzle.agents.harness.level import LevelEpisode
from longpuzzle.agents.harness.objective import ObjectiveEpisode, stop_problem
from longpuzzle.agents.harness.settings import HarnessError, Settings
from longpuzzle.engine.catalog import Catalog
from longpuzzle.engine.errors import LongPuzzleError
from longpuzzle.engine.suite import Suite

# every header field the harness writes (run.py Run.__init__, objective.py, level.py)
HEADER_FIELDS = {"type", "format", "protocol", "objective", "level", "agent", "instruction", "evaluator_start",
                 "mismatch_start", "first_wait", "settings", "catalog", "start", "frame_hash", "frame",
                 "continued_from",     # replay.continue_episode: the episode and step it continues
                 "stop_when",          # objective.py: a continuation's stop condition (replay derives its end)
                 "planned"}            # runner.run_episode: {"folder", "attempt"}, checked by verify.py
# what a tool driver (vista/controller.py, vista/model.py, vista/cli.py) adds to the header:
# labels of how the agent played, no game or evaluator state; each of the type given
DRIVER_HEADER = {"driver": str, "setting": str, "tools": list, "model": str, "tool_config": str}
# the fields of each kind of record (run.py dispatch / refuse, objective.py submit, the end)
RECORD_FIELDS = {
    "dispatched": {"stream", "step", "action", "t_agent", "t_dispatch", "sim_ms", "presses", "feedback", "frames",
                   "cut_at"},
    "refused": {"stream", "step", "action", "t_agent", "feedback", "frames"},
    "final_answer": {"stream", "step", "final_answer"},
    "late_action": {"stream", "step", "late_action", "t_agent"},
    "private": {"stream", "step", "record", "suite", "snapshot"},
    "end": {"type", "end", "error", "result"},
}
# streams of lines a driver adds, checked by their own checker (vista/records.py)
DRIVER_STREAMS = ("tools",)
# the fields of an objective episode's result.json (results.py EpisodeResult.as_dict, the
# derived ones of objective_results, the driver's extras, what runner.run_episode adds)
OBJECTIVE_RESULT_FIELDS = {
    "objective", "protocol", "agent", "end", "scored", "actions", "seconds", "charged_seconds", "time", "presses",
    "invalid_actions", "rules", "error", "success", "solved", "target_levels", "levels_outcome", "mismatch",
    "budget_remaining", "levels", "native_steps", "other_steps", "NGAR", "catalog", "moves", "moves_before_win",
    "metrics",
    "agent_isolation", "tools",          # the driver's extras (run_objective; the VISTA / MCP controller)
    "folder", "model",                   # runner.run_episode: where it is in the run, the model's usage
}
# a level of the level protocol (level.py LevelEpisode.finish)
LEVEL_RESULT_FIELDS = {"level", "run", "success", "termination", "steps", "elapsed", "time", "presses", "moves",
                       "moves_before_win", "invalid_actions", "progress", "score", "error", "agent_isolation"}
TIME_FIELDS = {"real", "charged", "agent", "harness", "simulated", "latency", "charge_agent_time", "action_latency",
               "budget"}


def recorded_settings(head: dict) -> Settings:
    """The Settings an episode header records (HarnessError if they cannot be used)."""
    try:
        return Settings(**{k: v for k, v in head["settings"].items() if k in Settings.__dataclass_fields__})
    except (HarnessError, LongPuzzleError, TypeError) as e:
        raise HarnessError(f"the episode's recorded settings cannot be used: {e}") from None


def expected_header(head: dict, continued: dict | None, cat: Catalog) -> dict:
    """The header fields that follow from the protocol, the objective or level, the
    settings and the catalogue ``cat``: the header the protocol's own stepper
    (ObjectiveEpisode, LevelEpisode) writes when it starts such an episode, made again here
    without a folder. ``continued``: for an episode continued from a step of another, what
    that verified episode had reached there ({"start", "evaluator_start", "mismatch_start"},
    replay.py derives it)."""
    st = recorded_settings(head)
    proto = head.get("protocol")
    if proto == "objective":
        try:
            obj = cat.objective(head["objective"])
        except (LongPuzzleError, KeyError, TypeError, ValueError):
            raise HarnessError(f"the episode names an unknown objective {str(head.get('objective'))[:60]!r}") from None
        made = ObjectiveEpisode(obj.game, obj.difficulty, settings=st, catalog=cat).run.header
        want = {k: made[k] for k in ("objective", "instruction", "evaluator_start", "mismatch_start", "first_wait",
                                     "settings", "start")}
        # the instruction may carry a note after a line break: an intervention at a
        # continuation, or given from the start (diagnose rules: the game's rule card)
        text = head.get("instruction")
        if type(text) is str and text.startswith(want["instruction"] + "\n"):
            want["instruction"] = text
        if continued is not None:
            del want["start"]
            return {**want, **continued}
        return want
    lid = head.get("level")
    try:
        lvl = cat.level(lid)
    except (LongPuzzleError, KeyError, TypeError, ValueError):
        raise HarnessError(f"the episode names an unknown level {str(lid)[:60]!r}") from None
    made = LevelEpisode(lvl.id, settings=st, catalog=cat).run.header
    return {k: made[k] for k in ("level", "instruction", "settings", "start")}


def _objective_levels(head: dict, cat: Catalog) -> list:
    try:
        return cat.objective(head["objective"]).level_ids
    except (LongPuzzleError, KeyError, TypeError, ValueError):
        return []


def screen_shape(head: dict, cat: Catalog | None = None) -> tuple[int, int, int]:
    """(height, width, 3) of the frames an episode's screen makes (its recorded start: the
    settings' scale and viewport; a level screen's id is looked up in ``cat``, default the
    built-in catalogue), the only size its stored frames may have; HarnessError
    when the start cannot be restored."""
    try:
        w, h = Suite.restore(head["start"], cat).frame_size
    except (LongPuzzleError, KeyError, TypeError) as e:
        raise HarnessError(f"the episode's start cannot be restored: {e}") from None
    return h, w, 3


def check_header(head: dict, continued: dict | None, cat: Catalog) -> str:
    """"" when every field of the header is what the harness writes for its protocol,
    objective or level, settings and catalogue (and ``continued``, expected_header);
    else the first difference."""
    extra = sorted(set(head) - HEADER_FIELDS - set(DRIVER_HEADER))
    if extra:
        return f"the header has a field the harness does not write: {extra[0][:40]!r}"
    for k, t in DRIVER_HEADER.items():
        if k in head and (type(head[k]) is not t or head.get("protocol") != "objective"):
            return f"the header's {k!r} is malformed"
    if type(head.get("agent")) is not str or not head["agent"]:
        return "the header names no agent"
    if head.get("catalog") != cat.identity():
        return "the header's catalogue is not the one its levels were checked on"
    pl = head.get("planned")
    if "planned" in head and not (type(pl) is dict and set(pl) == {"folder", "attempt"} and
                                  type(pl["folder"]) is str and type(pl["attempt"]) is int and pl["attempt"] >= 0):
        return "the header's 'planned' is malformed"
    if "stop_when" in head and (head.get("protocol") != "objective" or not head["stop_when"]
                                or stop_problem(head["stop_when"], _objective_levels(head, cat))):
        return "the header's 'stop_when' is malformed"
    if ("continued_from" in head) != (continued is not None):
        return "the header's 'continued_from' was not checked"
    want = expected_header(head, continued, cat)
    absent = {"objective": ("level",), "level": ("objective", "evaluator_start", "mismatch_start", "first_wait")}
    for k in absent[head["protocol"]]:
        if k in head:
            return f"the header has {k!r}, which the {head['protocol']} protocol does not write"
    for k, v in want.items():
        if k not in head:
            return f"the header has no {k!r}"
        if _canon(head[k]) != _canon(v):
            return f"the header's {k!r} is not what the episode starts from (recomputed from the catalogue)"
    return ""


def _canon(v):
    return json.loads(json.dumps(v, sort_keys=True, default=str))
