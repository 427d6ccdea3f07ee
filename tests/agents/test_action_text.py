"""The takeover prefix's text of an action (agents/action_text.py): what the harness writes,
the scripted agents read back, exactly, for every action type the GUI takes."""

import pytest

from longpuzzle.agents.action_text import action_text, prefix_actions, read_action, read_record, record_text
from longpuzzle.engine.gui import ACTION_TYPES, validate

SIZE = (540, 960)
# every action type, with its defaults and with every optional field changed
ACTIONS = [
    {"type": "click", "x": 412, "y": 300},
    {"type": "click", "x": 12.5, "y": 300.123456789},
    {"type": "double_click", "x": 1, "y": 2},
    {"type": "long_press", "x": 10, "y": 20},
    {"type": "long_press", "x": 10, "y": 20, "ms": 1500},
    {"type": "press", "x": 5, "y": 6},
    {"type": "move", "x": 7, "y": 8},
    {"type": "release"},
    {"type": "release", "x": 3, "y": 4},
    {"type": "drag", "x0": 1, "y0": 2, "x1": 300.5, "y1": 4},
    {"type": "drag", "x0": 1, "y0": 2, "x1": 3, "y1": 4, "steps": 5, "ms": 250, "via": [[7, 8], [9.5, 10]]},
    {"type": "swipe", "direction": "left"},
    {"type": "swipe", "direction": "up", "x": 100, "y": 200, "distance": 150, "steps": 4, "ms": 100},
    {"type": "swipe", "x0": 270, "y0": 480, "x1": 270, "y1": 864},
    {"type": "key", "name": "Enter"},
    {"type": "key", "name": "a"},
    {"type": "typetext", "text": "ab 12\n"},
    {"type": "scroll"},
    {"type": "scroll", "x": 30, "y": 40, "direction": "left", "amount": 120},
    {"type": "wait", "ms": 2000},
    {"type": "wait", "ms": 0},
    {"type": "batch", "actions": [{"type": "click", "x": 1, "y": 2}, {"type": "typetext", "text": "a b"},
                                  {"type": "batch", "actions": [{"type": "key", "name": "Escape"}]},
                                  {"type": "swipe", "direction": "right", "x": 50, "y": 60}]},
]


def test_every_action_type_is_covered():
    assert {a["type"] for a in ACTIONS} == set(ACTION_TYPES)


@pytest.mark.parametrize("raw", ACTIONS, ids=lambda a: action_text(a))
def test_an_action_reads_back_exactly_as_given_and_as_validated(raw):
    for a in (raw, validate(raw, SIZE)):          # what an agent sent, and what the harness records
        text = action_text(a)
        back, end = read_action(text)
        assert end == len(text) and action_text(back) == text
        assert validate(back, SIZE) == validate(a, SIZE)


def test_a_prefix_line_reads_back_and_refused_actions_are_left_out():
    recs = [{"step": 1, "action": {"type": "wait", "ms": 1000}, "feedback": {"status": "wait_completed"}},
            {"step": 2, "action": {"type": "typetext", "text": "x -> y"}, "feedback": {"status": "screen_changed"}},
            {"step": 3, "action": {"type": "click", "x": -5, "y": "no"},
             "feedback": {"executed": False, "status": "dispatch_failed", "message": "x -> outside"}},
            {"step": 4, "action": {"type": "teleport"}, "feedback": {"executed": False, "message": "unknown"}},
            {"step": 5, "action": {"type": "swipe", "x0": 1, "y0": 2, "x1": 3, "y1": 4, "steps": 8, "ms": 300},
             "feedback": {"status": "no_visible_effect"}}]
    lines = [record_text(r) for r in recs]
    assert read_record(lines[1]) == (2, {"type": "typetext", "text": "x -> y"}, "screen_changed")
    assert prefix_actions(lines) == [recs[0]["action"], recs[1]["action"],
                                     {"type": "swipe", "x0": 1, "y0": 2, "x1": 3, "y1": 4}]
    for bad in ("step 1: teleport(1) -> ok", "click(1, 2) -> ok", "step 2: click(1, 2)", "step 2: click(1 -> ok",
                "step 2: drag(1, 2) -> ok", "step 2: click(1, 2, lots=3) -> ok"):
        with pytest.raises(ValueError, match="cannot read the prefix line"):
            prefix_actions([bad])
