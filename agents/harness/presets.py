"""Evaluation presets: the conditions of one published setting as one name.

    paper   the LongPuzzleBench paper's (PAPERS.md section 1 and appendix B): the objective
            protocol from the suite's home screen, the suite inside a 1280 x 900 page ("a
            dedicated Chromium browser at 1280 x 900"), the Chinese interface and Chinese
            prompts and task message ("the game interface is in Chinese, and so are the Codex
            prompts"), no per-game rule text in the prompt ("no prompt contains rules or
            strategies"), one 60-minute budget with model time charged, a refused action
            answered by the dispatcher and three in a row ending the episode, scored (the
            paper leaves unscored only failures that are not the agent's, B.1). The default
            of model evaluations.
    fast    this project's defaults before presets: the same protocol and budget on the game's
            own 540 x 960 frame (smaller screenshots: cheaper requests), English screens and
            prompts (the catalogue instruction, where a protocol sends one, in Chinese).
    repo    the original repository's harness (HARNESS.md): one level at a time in direct
            launch, progressive chains, 1080 x 1920 screenshots (twice the design frame), the
            Chinese game, the per-game timeouts with the game paused while the model thinks,
            refused actions answered with dispatch_failed, the general_e2e agent with the
            catalogue's full instruction in Chinese.

A harness is the other half of a published setting: how the agent is run within the preset's
conditions. ``d1`` is the diagnostics' harness (PAPERS.md section 4, D.1): the paper preset's
1280 x 900 screen, 2 s charged after each dispatched action (the runner's wait), and for model
agents the D.1 context (agents/models/d1.py: the takeover context, then 12 recent action turns
and 4 screenshots, a summary every 8 turns). ``eval --harness d1`` and every diagnose command.

A preset fills what the command line leaves unsaid; an option given explicitly wins, and the
result records the preset with the options that changed it (``label``): runs of different
presets (or of one preset changed differently) are never pooled by report or leaderboard
(agents/report/data.py: the preset is part of a run's identity).
"""

from __future__ import annotations

from longpuzzle.engine.geometry import PRESET_SCREENS

PRESET_NAMES = ("paper", "fast", "repo")

PRESETS: dict[str, dict] = {
    "paper": {
        "protocol": "objective",
        "settings": {**PRESET_SCREENS["paper"], "budget": 3600.0,
                     "charge_agent_time": True, "invalid_action_policy": "dispatch_failed"},
        # model agents: the prompts in the screen's language (the task message names the
        # on-screen labels), no catalogue rule text
        "agent_options": {"prompt_setting": None, "language": "zh"},
        "agent": None,
    },
    "fast": {
        "protocol": "objective",
        "settings": {**PRESET_SCREENS["fast"], "budget": 3600.0},
        "agent_options": {},
        "agent": None,
    },
    "repo": {
        "protocol": "level",
        "settings": {**PRESET_SCREENS["repo"], "charge_agent_time": False,
                     "invalid_action_policy": "dispatch_failed"},
        "agent_options": {"prompt_setting": "full", "language": "zh"},
        "agent": "general_e2e",
    },
}


HARNESS_NAMES = ("default", "d1")

HARNESSES: dict[str, dict] = {
    "default": {"settings": {}, "agent_options": {}},
    "d1": {"settings": {"viewport": PRESET_SCREENS["paper"]["viewport"], "action_latency": 2.0},
           "agent_options": {"memory": "d1"}},
}


def harness_settings(name: str | None, settings, *, keep_screen: bool = False):
    """``settings`` (harness Settings) under harness ``name`` (None / "default": unchanged).
    ``keep_screen``: a continuation keeps its source's screen (the state restored is drawn as
    it was recorded), so only the harness's other settings apply."""
    from dataclasses import replace
    given = dict(HARNESSES[name or "default"]["settings"])
    if keep_screen:
        given.pop("viewport", None)
    return replace(settings, **given)


def label(name: str, changed: list[str]) -> str:
    """What a result records as its preset: the name, and the options given that changed it
    (sorted), e.g. ``paper`` or ``paper (changed: budget, viewport)``."""
    return name if not changed else f"{name} (changed: {', '.join(sorted(set(changed)))})"
