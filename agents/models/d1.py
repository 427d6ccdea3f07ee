"""The context of a model agent under the diagnostics' harness (PAPERS.md section 4, D.1):
what each request holds, as opposed to the full history a model agent keeps by default.

    at takeover   the public action prefix as text, up to 4 screenshot-action pairs before the
                  takeover and the current screenshot (api.Takeover; takeover_parts)
    afterwards    the opening (system prompt, the task text) and the latest summary, then at
                  most TURNS recent action turns, with at most IMAGES screenshots among them
                  (the newest); every SUMMARY_EVERY turns the model writes a summary of the
                  play so far (summary_request), which replaces the one before

An action turn is one reply of the model and what answered it (the observation after its
actions, or a correction): it starts at an assistant message. The takeover's screenshots are
shown with the first request after the takeover and then leave the context; its text stays.
"""

from __future__ import annotations

TURNS = 12              # recent action turns kept
IMAGES = 4              # screenshots kept (at takeover: the pairs and the current one)
SUMMARY_EVERY = 8       # turns between two summaries
SUMMARY_INTRO = "Summary of the play so far (written by you; earlier turns are no longer shown):\n"
TAKEOVER_INTRO = ("You are taking over this game from an earlier player, at the screen shown below. "
                  "What was done before you took over:")


def summary_request() -> str:
    """The request for the model's summary every SUMMARY_EVERY turns."""
    return ("Write a short summary of the play so far that lets you continue without the earlier turns: the "
            "goal, where you are (game, difficulty, level), what you did and what happened, what you learned "
            "about the controls and the puzzle, and your plan. Reply with the summary text only; do not act now.")


def takeover_parts(takeover, png, with_current: bool) -> list[dict]:
    """The parts of the takeover message: the prefix as text, each pair's screenshot with the
    action chosen on it, and (``with_current``) the current screenshot. ``png(frame)`` encodes
    a screenshot as the model sees it. Image refs name the takeover's pictures (``takeover``:
    the pair's index, ``source_step``: the source's step shown), not this episode's frames."""
    parts = [{"text": f"{TAKEOVER_INTRO}\n{takeover.prefix_text()}"}]
    n = len(takeover.pairs)
    for i, (frame, action) in enumerate(takeover.pairs):
        parts.append({"text": f"Screenshot {i + 1} of {n} before the takeover; the action taken on it: {action}"})
        parts.append({"image": png(frame), "ref": {"takeover": i, "source_step": takeover.step - n + i}})
    if with_current and takeover.frame is not None:
        parts.append({"text": "The current screenshot (the state you take over):"})
        parts.append({"image": png(takeover.frame), "ref": {"takeover": n, "source_step": takeover.step}})
    return parts


def opening_end(history: list[dict]) -> int:
    """Index of the first assistant message (the opening is everything before it)."""
    return next((i for i, m in enumerate(history) if m["role"] == "assistant"), len(history))


def turn_starts(history: list[dict]) -> list[int]:
    """Indices of the assistant messages: where each action turn starts."""
    return [i for i, m in enumerate(history) if m["role"] == "assistant"]


def window(history: list[dict], summary: str | None, *, turns: int = TURNS, images: int = IMAGES,
           takeover_live: bool = False) -> list[dict]:
    """The messages a request holds (the system prompt aside): the opening, the latest
    summary, the last ``turns`` action turns; only the newest ``images`` screenshots keep
    their pixels (the others are sent as the client's placeholder), except while the
    takeover is live (no action turn since it), when every takeover screenshot is shown.
    The history itself is not changed."""
    head = opening_end(history)
    starts = turn_starts(history)
    first = starts[-turns] if len(starts) > turns else head
    msgs = history[:head] + ([{"role": "user", "parts": [{"text": SUMMARY_INTRO + summary}]}] if summary else []) \
        + history[first:]
    keep = images
    out: list[dict] = []
    for m in reversed(msgs):                 # newest first: the first `keep` images keep their pixels
        parts = m.get("parts")
        if parts is None:
            out.append(m)
            continue
        new = []
        for p in reversed(parts):
            if "image" in p and p["image"] is not None:
                live = takeover_live and "takeover" in p["ref"]
                if keep > 0 or live:
                    keep -= 0 if live else 1
                else:
                    p = {"image": None, "ref": p["ref"]}
            new.append(p)
        out.append({**m, "parts": new[::-1]})
    return out[::-1]
