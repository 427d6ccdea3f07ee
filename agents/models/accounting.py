"""Token, latency and cost accounting: per model call, summed per episode, objective and run.

``CallUsage`` is what one call reported (input tokens split into uncached and cached, output
tokens, reasoning tokens where the provider reports them, latency including retries, the
retries, whether the reply failed to parse). ``Usage`` sums calls. Cost is computed from a
price table kept as data (prices.json: USD per million uncached input, cached input and
output tokens); an unknown price gives cost None, never a guess. Reasoning tokens are part
of the output tokens (as every provider bills them) and are not billed twice.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from importlib import resources
from pathlib import Path

PER_MILLION = 1_000_000.0


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; cached_input None bills cached input at the input price."""
    input: float
    output: float
    cached_input: float | None = None

    def cost(self, input_uncached: int, input_cached: int, output: int) -> float:
        cached = self.input if self.cached_input is None else self.cached_input
        return (input_uncached * self.input + input_cached * cached + output * self.output) / PER_MILLION

    @classmethod
    def from_dict(cls, d: dict) -> Prices:
        try:
            p = cls(float(d["input"]), float(d["output"]),
                    None if d.get("cached_input") is None else float(d["cached_input"]))
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"a price needs numbers 'input' and 'output' (and optionally 'cached_input'), not {d!r}") from None
        if min(p.input, p.output, p.cached_input or 0.0) < 0:
            raise ValueError(f"prices cannot be negative: {d!r}")
        return p


def price_table(path: str | Path | None = None) -> dict[str, Prices]:
    """The price table (the package's prices.json, or another file of the same form)."""
    if path is None:
        text = (resources.files("longpuzzle.agents.models") / "prices.json").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text)
    return {k.lower(): Prices.from_dict(v) for k, v in data["models"].items()}


def find_price(model: str, key: str | None = None, table: dict[str, Prices] | None = None) -> Prices | None:
    """The price of ``model``: by ``key`` if given, else by the model name or its last path
    component (``org/Model-Name`` -> ``model-name``), case-insensitively."""
    t = price_table() if table is None else table
    for k in ([key] if key else []) + [model, model.rsplit("/", 1)[-1]]:
        if k and k.lower() in t:
            return t[k.lower()]
    return None


@dataclass
class CallUsage:
    """One model call as reported by the provider, plus what the client measured."""
    input_uncached: int = 0
    input_cached: int = 0
    output: int = 0
    reasoning: int = 0               # part of output, where reported
    latency: float = 0.0             # seconds, all attempts and back-off waits included
    retries: int = 0
    reported: bool = True            # False when the provider sent no usage

    @property
    def input(self) -> int:
        return self.input_uncached + self.input_cached


@dataclass
class Usage:
    """Sums over calls (an episode, an objective, a run)."""
    calls: int = 0
    input_uncached: int = 0
    input_cached: int = 0
    output: int = 0
    reasoning: int = 0
    latency: float = 0.0
    retries: int = 0
    parse_failures: int = 0
    compactions: int = 0
    claims: int = 0                  # completion claims answered with a continuation prompt or ending
    unreported: int = 0              # calls without usage from the provider
    cost: float | None = 0.0         # USD; None when a price is unknown
    by_kind: dict = field(default_factory=dict)   # calls per kind: step, correction, continuation, compaction, ...

    def add_call(self, u: CallUsage, prices: Prices | None, kind: str = "step") -> float | None:
        self.calls += 1
        self.input_uncached += u.input_uncached
        self.input_cached += u.input_cached
        self.output += u.output
        self.reasoning += u.reasoning
        self.latency += u.latency
        self.retries += u.retries
        self.unreported += not u.reported
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        c = None if prices is None else prices.cost(u.input_uncached, u.input_cached, u.output)
        self.cost = None if (c is None or self.cost is None) else self.cost + c
        return c

    def merge(self, o: Usage) -> Usage:
        for f in fields(self):
            if f.name in ("cost", "by_kind"):
                continue
            setattr(self, f.name, getattr(self, f.name) + getattr(o, f.name))
        self.cost = None if (self.cost is None or o.cost is None) else self.cost + o.cost
        for k, v in o.by_kind.items():
            self.by_kind[k] = self.by_kind.get(k, 0) + v
        return self

    def as_dict(self) -> dict:
        d = asdict(self)
        d["latency"] = round(d["latency"], 3)
        if d["cost"] is not None:
            d["cost"] = round(d["cost"], 8)
        return d

    @classmethod
    def from_dict(cls, d: dict | None) -> Usage:
        u = cls()
        for f in fields(cls):
            if d and f.name in d:
                setattr(u, f.name, dict(d[f.name]) if f.name == "by_kind" else d[f.name])
        return u
