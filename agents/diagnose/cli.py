"""``longpuzzle diagnose``: the diagnostics lab's commands (issue 39; agents/diagnose).

Each experiment's module defines its click command; the table below names it, and the group
loads a module only when its command runs (start-up: ``--help`` loads none of them).
"""

from __future__ import annotations

import importlib

import click

# command name -> "module:attribute" of its click command
SUBCOMMANDS: dict[str, str] = {
    "checkpoints": "longpuzzle.agents.diagnose.checkpoint_sources:checkpoints_cmd",
    "branch": "longpuzzle.agents.diagnose.branch_cli:branch_cmd",
    "judge": "longpuzzle.agents.diagnose.judge:judge_cmd",
    "retry": "longpuzzle.agents.diagnose.retry_cli:retry_cmd",
    "rules": "longpuzzle.agents.diagnose.rules_cli:rules_cmd",
    "takeover": "longpuzzle.agents.diagnose.takeover:takeover_cmd",
}


class _Lab(click.Group):
    def list_commands(self, ctx):
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx, name):
        target = SUBCOMMANDS.get(name)
        if target is None:
            return None
        mod, attr = target.split(":")
        return getattr(importlib.import_module(mod), attr)


@click.group("diagnose", cls=_Lab)
def diagnose_cmd():
    """The paper's section 5 diagnostics on exact, restored states (checkpoints, takeover,
    retry, rules, branch, judge), with any agent eval accepts."""


COMMANDS = [diagnose_cmd]
