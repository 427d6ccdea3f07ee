"""The text of a GUI action, as the takeover context's public prefix writes it (D.1: one line
per recorded action, ``step 7: click(412, 300) -> screen_changed``), and the one reader of it.

Written by the harness (harness/takeover.py builds the prefix with ``record_text``), read back
by agents that rebuild the board they take over from the prefix (agents/scripted.py
``AppModelAgent.take_over``): one format, both directions here, so whatever the writer can
write the reader reads. The text is exact for every validated action (engine/gui.py SCHEMA):
the common fields are positional (``drag(x0, y0, x1, y1)``, ``swipe(left at 270, 480)``), a
field that differs from its default follows as ``name=JSON`` (``long_press(10, 20, ms=1500)``,
``drag(1, 2, 3, 4, steps=5, via=[[7,8]])``), and a number is written short (``270``) only
where that reads back as the same value.
"""

from __future__ import annotations

import json
import re

from longpuzzle.engine.gui import SCHEMA

POINT_TYPES = ("click", "double_click", "long_press", "press", "move")


def _num(v) -> str:
    if isinstance(v, float):
        short = f"{v:g}"
        return short if float(short) == v else repr(v)
    return str(v)


def _extras(action: dict, t: str, names: tuple[str, ...]) -> str:
    """The fields among ``names`` whose value is not the type's default, as ``, name=JSON``."""
    defaults = SCHEMA.get(t, ((), {}))[1]
    out = ""
    for k in names:
        v = action.get(k)
        if k in action and v is not None and v != defaults.get(k):
            out += f", {k}={json.dumps(v, separators=(',', ':'))}"
    return out


def action_text(action: dict) -> str:
    """An action as one line of text, e.g. ``click(412, 300)``, ``drag(10, 20, 200, 20)``,
    ``key(Enter)``, ``swipe(left)``, ``wait(2000 ms)``, ``batch[click(1, 2); key(Enter)]``."""
    if not isinstance(action, dict):
        return str(action)
    t = action.get("type", "?")
    if t == "batch":
        return "batch[" + "; ".join(action_text(a) for a in action.get("actions") or ()) + "]"
    if t == "drag" or (t == "swipe" and action.get("x0") is not None):
        return f"{t}({', '.join(_num(action.get(k)) for k in ('x0', 'y0', 'x1', 'y1'))}" \
               f"{_extras(action, t, ('steps', 'ms', 'via'))})"
    if t == "swipe":
        at = f" at {_num(action['x'])}, {_num(action['y'])}" if action.get("x") is not None else ""
        return f"swipe({action.get('direction')}{at}{_extras(action, t, ('distance', 'steps', 'ms'))})"
    if t == "key":
        return f"key({action.get('name')})"
    if t == "typetext":
        return f"typetext({str(action.get('text'))!r})"
    if t == "scroll":
        at = f" at {_num(action['x'])}, {_num(action['y'])}" if action.get("x") is not None else ""
        return f"scroll({action.get('direction', 'down')}{at}{_extras(action, t, ('amount',))})"
    if t == "wait":
        return f"wait({_num(action.get('ms', 1000))} ms)"
    if "x" in action and "y" in action and action.get("x") is not None:
        return f"{t}({_num(action['x'])}, {_num(action['y'])}{_extras(action, t, ('ms',))})"
    return f"{t}()"


def record_text(rec: dict) -> str:
    """A public step record as one line: its step, its action and the feedback it got."""
    fb = rec.get("feedback") or {}
    status = fb.get("status", "")
    if fb.get("executed") is False:
        status = f"refused: {fb.get('message', '')}".rstrip(": ")
    return f"step {rec['step']}: {action_text(rec.get('action'))} -> {status}"


# ---- the reader ---------------------------------------------------------------------------------

_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|-?inf|nan")
_WORD = re.compile(r"[A-Za-z_]+")
_LINE = re.compile(r"step (\d+): ")


def _number(s: str):
    if not _NUMBER.fullmatch(s):
        raise ValueError(f"not a number: {s!r}")
    return int(s) if re.fullmatch(r"-?\d+", s) else float(s)


def _close(text: str, i: int, opener: str) -> int:
    """The index just past the bracket that closes ``opener`` at ``text[i - 1]``, skipping
    quoted strings (a typetext's repr, JSON) and nested brackets."""
    depth, quote = [opener], None
    pairs = {"(": ")", "[": "]", "{": "}"}
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in pairs:
            depth.append(c)
        elif c == pairs[depth[-1]]:
            depth.pop()
            if not depth:
                return i + 1
        i += 1
    raise ValueError(f"unclosed {opener!r} in {text!r}")


def _split(inner: str, sep: str) -> list[str]:
    """``inner`` split on ``sep`` outside quotes and brackets."""
    out, start, i = [], 0, 0
    while i < len(inner):
        c = inner[i]
        if c in "([{":
            i = _close(inner, i + 1, c)
            continue
        if c in "'\"":
            j = i + 1
            while j < len(inner) and inner[j] != c:
                j += 2 if inner[j] == "\\" else 1
            i = j + 1
            continue
        if inner.startswith(sep, i):
            out.append(inner[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    out.append(inner[start:])
    return out


def read_action(text: str, i: int = 0) -> tuple[dict, int]:
    """The action written at ``text[i:]`` (``action_text``'s format) and the index after it;
    ValueError when there is none."""
    m = _WORD.match(text, i)
    if m is None:
        raise ValueError(f"no action at {text[i:]!r}")
    t, j = m.group(), m.end()
    if t == "batch" and text.startswith("[", j):
        end = _close(text, j + 1, "[")
        inner = text[j + 1:end - 1]
        acts = []
        for part in _split(inner, "; "):
            a, k = read_action(part)
            if k != len(part):
                raise ValueError(f"cannot read {part!r} in a batch")
            acts.append(a)
        return {"type": "batch", "actions": acts}, end
    if not text.startswith("(", j) or t not in SCHEMA:
        raise ValueError(f"not an action: {text[i:]!r}")
    end = _close(text, j + 1, "(")
    return _fields(t, text[j + 1:end - 1]), end


def _fields(t: str, inner: str) -> dict:
    """The action of type ``t`` from the text between its parentheses."""
    import ast

    if t == "typetext":
        return {"type": t, "text": ast.literal_eval(inner)}
    if t == "key":
        return {"type": t, "name": inner}
    if t == "wait":
        if not inner.endswith(" ms"):
            raise ValueError(f"cannot read wait({inner})")
        return {"type": t, "ms": _number(inner[:-3])}
    parts = _split(inner, ", ") if inner else []
    pos = [p for p in parts if not re.match(r"[a-z_]+=", p)]
    kw = {p.split("=", 1)[0]: json.loads(p.split("=", 1)[1]) for p in parts if re.match(r"[a-z_]+=", p)}
    out: dict = {"type": t}
    if t in ("swipe", "scroll") and pos and not _NUMBER.fullmatch(pos[0]):
        direction, _, x = pos[0].partition(" at ")     # swipe(left at 270, 480), scroll(down)
        out["direction"] = direction
        if x:
            if len(pos) != 2:
                raise ValueError(f"cannot read {t}({inner})")
            out["x"], out["y"] = _number(x), _number(pos[1])
        elif len(pos) != 1:
            raise ValueError(f"cannot read {t}({inner})")
    elif t in ("drag", "swipe"):
        if len(pos) != 4:
            raise ValueError(f"cannot read {t}({inner})")
        out.update(zip(("x0", "y0", "x1", "y1"), map(_number, pos)))
    elif len(pos) == 2 and (t in POINT_TYPES or t == "release"):
        out["x"], out["y"] = map(_number, pos)
    elif pos or t in POINT_TYPES:
        raise ValueError(f"cannot read {t}({inner})")
    allowed = set(SCHEMA[t][0]) | set(SCHEMA[t][1])
    if set(kw) - allowed:
        raise ValueError(f"cannot read {t}({inner}): no field {sorted(set(kw) - allowed)[0]!r}")
    out.update(kw)
    return out


def read_record(line: str) -> tuple[int, dict, str]:
    """A prefix line (``record_text``) read back: (step, action, status); a refused action's
    status starts with ``refused``. ValueError when the line is not one."""
    m = _LINE.match(line)
    if m is None:
        raise ValueError(f"cannot read the prefix line {line!r}")
    try:
        action, end = read_action(line, m.end())
    except ValueError as e:
        raise ValueError(f"cannot read the prefix line {line!r} ({e})") from None
    if not line.startswith(" -> ", end):
        raise ValueError(f"cannot read the prefix line {line!r}")
    return int(m.group(1)), action, line[end + 4:]


def prefix_actions(lines) -> list[dict]:
    """The dispatched actions of a takeover's prefix text, in order (a refused action was never
    dispatched and is left out); ValueError on a line that is not the format's."""
    out = []
    for line in lines:
        try:
            _, action, status = read_record(line)
        except ValueError:
            if " -> refused" in line:       # a refused action may be any malformed thing
                continue
            raise
        if not status.startswith("refused"):
            out.append(action)
    return out
