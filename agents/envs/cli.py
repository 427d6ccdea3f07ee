"""Commands of longpuzzle.agents.envs: ``envs`` (added to the ``longpuzzle`` CLI)."""

from __future__ import annotations

import json
import warnings

import click

from longpuzzle.engine.catalog_store import catalog_option
from longpuzzle.engine.errors import LongPuzzleError


def _describe(space) -> str:
    """A short text of a space (a Box's bounds are left out)."""
    from gymnasium import spaces
    if isinstance(space, spaces.Box):
        return f"Box{space.shape} {space.dtype}"
    if isinstance(space, spaces.Dict):
        return "Dict(" + ", ".join(f"{k}: {_describe(v)}" for k, v in space.items()) + ")"
    return str(space)


@click.command("envs")
@click.option("--check", is_flag=True, help="Run gymnasium's check_env on every id in every mode.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@catalog_option
def envs_cmd(check, as_json, catalog):
    """List the Gymnasium environment ids (longpuzzle/<Game>-v0 in rules and pixel mode, and
    longpuzzle/Suite-v0) with their spaces for the default level; --check runs Gymnasium's
    environment checker on each (e.g. after adding a game)."""
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    import longpuzzle.agents.envs as lpe

    rows = []
    for eid in lpe.registered_ids():
        spec = gym.spec(eid)
        game = spec.kwargs.get("game")
        if game is not None and game not in catalog.games():     # a snapshot of some games only
            rows.append({"id": eid, "mode": None, "max_episode_steps": spec.max_episode_steps,
                         "skipped": f"no {game} levels in catalogue {catalog.label}"})
            continue
        modes = ["suite"] if eid == lpe.SUITE_ID else ["rules", "pixels"]
        for mode in modes:
            kw = {} if mode == "suite" else {"mode": mode}
            env = gym.make(eid, catalog=catalog, **kw)
            row = {"id": eid, "mode": mode, "max_episode_steps": spec.max_episode_steps,
                   "observation_space": _describe(env.observation_space),
                   "action_space": _describe(env.action_space)}
            if check:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        check_env(env.unwrapped)
                        row["check"] = "ok"
                    except Exception as e:  # noqa: BLE001 - report every env, not just the first failure
                        row["check"] = f"FAILED: {type(e).__name__}: {e}"
                row["warnings"] = sorted({str(w.message) for w in caught})
            env.close()
            rows.append(row)
    if as_json:
        click.echo(json.dumps(rows, indent=1))
    else:
        for r in rows:
            if r["mode"] is None:
                click.echo(f"{r['id']:<28} (skipped: {r['skipped']})")
                continue
            line = (f"{r['id']:<28} {r['mode']:<7} max steps {r['max_episode_steps']!s:<5} "
                    f"obs {r['observation_space']:<22} actions {r['action_space'] if r['mode'] == 'rules' else 'GUI Dict'}")
            if check:
                line += f"  [{r['check']}]"
            click.echo(line)
    failed = [r for r in rows if r.get("check", "ok") != "ok"]
    if check and failed:
        raise LongPuzzleError("check_env failed for " + ", ".join(f"{r['id']} ({r['mode']})" for r in failed))


COMMANDS = [envs_cmd]
