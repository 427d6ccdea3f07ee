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


def label(name: str, changed: list[str]) -> str:
    """What a result records as its preset: the name, and the options given that changed it
    (sorted), e.g. ``paper`` or ``paper (changed: budget, viewport)``."""
    return name if not changed else f"{name} (changed: {', '.join(sorted(set(changed)))})"
