"""Calling an agent: a per-action timeout, and every failure turned into an AgentError."""

from __future__ import annotations

import concurrent.futures as cf
import json
from typing import Any

from longpuzzle.agents.base import AgentError, BaseAgent, FinalAnswer, InfrastructureError


class AgentCaller:
    """Calls agent.act with a per-action timeout; errors become AgentError (an
    InfrastructureError passes through: it is not the agent's failure)."""

    def __init__(self, agent: BaseAgent, timeout: float | None):
        self.agent = agent
        self.timeout = timeout
        self._pool = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent") if timeout else None

    def __call__(self, fn, *args):
        if self._pool is None:
            try:
                return fn(*args)
            except InfrastructureError:
                raise
            except Exception as e:       # noqa: BLE001 - any agent failure ends its episode
                raise AgentError("raised", f"{type(e).__name__}: {e}") from e
        fut = self._pool.submit(fn, *args)
        try:
            return fut.result(timeout=self.timeout)
        except cf.TimeoutError:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            raise AgentError("timeout", f"no action within {self.timeout:g} s") from None
        except InfrastructureError:
            raise
        except Exception as e:           # noqa: BLE001
            raise AgentError("raised", f"{type(e).__name__}: {e}") from e

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=False)


def check_returned(action: Any) -> None:
    """An agent must return an action (a dict, possibly malformed: that is refused with a
    message and counted invalid) or a FinalAnswer; anything else is garbage and ends the
    episode as an agent error."""
    if not isinstance(action, (dict, FinalAnswer)):
        raise AgentError("garbage", f"act() returned {type(action).__name__}, not an action dict or FinalAnswer")


def jsonable_action(a: Any) -> Any:
    try:
        json.dumps(a)
        return a
    except (TypeError, ValueError):
        return repr(a)
