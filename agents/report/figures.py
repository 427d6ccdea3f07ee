"""The paper's figures, drawn with matplotlib from a run's own data (PNG files).

    figure_3a   easiest-tier LC against harder-tier LC, one point per agent row
    figure_3b   Maze Paint LC per tier against the tier's mean optimal number of slides
    figure_3c   share of episodes that clear the first k levels of the ten-level objectives
    progress    one episode: progress P over actions, one line per level, restarts and
                certified dead ends marked; with the oracle's annotation (``analysis["oracle"]``,
                oracle_steps.py) a second panel under it: d(s) over the same actions, the fatal
                actions and the moves on a lost board marked (this project's, not the paper's)
    figure_4a   one Bolt Unscrew episode: usable free holes before each transfer along every
                attempt, dead ends marked
    figure_4b   Bolt Unscrew moves by the usable free holes before them: the shares that free
                a board, fill a hole, deadlock (analytics.bolt_capacity)
    figure_branch  the same-state action intervention: each branch's same-level completion
                with its interval (diagnose branch)

Each returns the path it wrote, or None when the data has nothing to draw. matplotlib is used
through its object API (Figure + the Agg canvas): no pyplot state, no display, no backend
switch in the caller's process. The figures carry no title: the report's caption names each.
"""

from __future__ import annotations

from pathlib import Path

from longpuzzle.agents.metrics import HORIZON_LEVELS

DPI = 110
WIDE = (7.6, 3.6)
SQUARE = (5.2, 4.4)
LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0, "fontsize": 8,
          "frameon": False}


def _figure(size):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.grid(True, color="#e4e4e4", linewidth=0.7)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight", facecolor="white")
    return path


def _colours(n: int):
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


# ---- across agents --------------------------------------------------------------------

def figure_3a(points: list[tuple[str, float | None, float | None]], path: Path) -> Path | None:
    """``points``: (agent label, easiest-tier LC, harder-tier LC)."""
    pts = [(l, x, y) for l, x, y in points if x is not None and y is not None]
    if not pts:
        return None
    fig, ax = _figure(SQUARE)
    ax.plot([0, 100], [0, 100], color="#999999", linestyle="--", linewidth=1, label="harder = easiest")
    for (label, x, y), c in zip(pts, _colours(len(pts))):
        ax.scatter([x], [y], s=46, color=c, label=label, zorder=3, edgecolors="black", linewidths=0.4)
    ax.set_xlim(-3, 103)
    ax.set_ylim(-3, 103)
    ax.set_xticks(range(0, 101, 20))
    ax.set_yticks(range(0, 101, 20))
    ax.set_xlabel("LC on each game's easiest tier (%)")
    ax.set_ylabel("LC on the harder tiers, LC_hard (%)")
    ax.legend(**LEGEND)
    return _save(fig, path)


def figure_3b(series: list[tuple[str, list[tuple[str, float, float]]]], path: Path) -> Path | None:
    """``series``: (agent label, [(tier, mean optimal slides, LC), ...])."""
    series = [(l, sorted(p, key=lambda t: t[1])) for l, p in series if p]
    if not series:
        return None
    fig, ax = _figure(WIDE)
    for (label, pts), c in zip(series, _colours(len(series))):
        ax.plot([p[1] for p in pts], [p[2] for p in pts], marker="o", color=c, label=label)
    tiers = {}
    for _, pts in series:
        for tier, x, _ in pts:
            tiers[tier] = x
    for tier, x in tiers.items():
        ax.annotate(tier, (x, 100), xytext=(0, 4), textcoords="offset points", ha="center", fontsize=8,
                    color="#555555")
    ax.set_ylim(-3, 108)
    ax.set_yticks(range(0, 101, 20))
    ax.set_xlim(0, max(tiers.values()) * 1.15 + 1)
    ax.set_xlabel("mean optimal number of slides per level of the tier")
    ax.set_ylabel("Maze Paint LC (%)")
    ax.legend(**LEGEND)
    return _save(fig, path)


def figure_3c(curves: list[tuple[str, list[float]]], path: Path) -> Path | None:
    """``curves``: (agent label, S(0) .. S(10) as shares in [0, 1])."""
    curves = [(l, s) for l, s in curves if s]
    if not curves:
        return None
    fig, ax = _figure(WIDE)
    ks = list(range(HORIZON_LEVELS + 1))
    for (label, s), c in zip(curves, _colours(len(curves))):
        ax.plot(ks, [100 * v for v in s], marker="o", markersize=4, linewidth=1.5, color=c, label=label)
    ax.axhline(50, color="#999999", linestyle="--", linewidth=1, label="50% (H50)")
    ax.set_xticks(ks)
    ax.set_xlim(-0.3, HORIZON_LEVELS + 0.3)
    ax.set_ylim(-3, 103)
    ax.set_yticks(range(0, 101, 20))
    ax.set_xlabel("first k levels cleared")
    ax.set_ylabel("episodes (%)")
    ax.legend(**LEGEND)
    return _save(fig, path)


# ---- one episode ----------------------------------------------------------------------

def _level_short(lid: str) -> str:
    g, d, n = lid.split("/")
    return f"{d} {n}" if g else lid


def progress(analysis: dict, path: Path) -> Path | None:
    """P over the episode's actions, one line per level; restarts (triangles) and the first
    certified dead end of each attempt (crosses) marked."""
    pts = analysis.get("progress") or []
    if not pts:
        return None
    levels = list(dict.fromkeys(l for _, l, _ in pts))
    orc = analysis.get("oracle")
    if orc and orc.get("steps"):
        levels += [l for l in dict.fromkeys(s[1] for s in orc["steps"]) if l not in levels]
    colours = dict(zip(levels, _colours(len(levels))))
    if orc and orc.get("steps"):
        fig, ax, low = _figure_two(WIDE)
    else:
        fig, ax = _figure(WIDE)
        low = None
    for lid in levels:
        xs = [x for x, l, _ in pts if l == lid]
        ys = [p for _, l, p in pts if l == lid]
        ax.plot(xs, ys, color=colours[lid], linewidth=1.4, drawstyle="steps-post", label=_level_short(lid))
    rs = analysis.get("restarts") or []
    if rs:
        ax.scatter([x for x, _ in rs], [0.0] * len(rs), marker="^", s=30, color=[colours.get(l, "k") for _, l in rs],
                   edgecolors="black", linewidths=0.4, zorder=4, label="restart")
    dead = [(a["dead_end_step"], a) for a in analysis.get("attempts", []) if a.get("dead_end_step") is not None]
    if dead:
        ys = []
        for x, a in dead:
            ys.append(next((p for px, l, p in pts if px == x and l == a["level"]), 0.0))
        ax.scatter([x for x, _ in dead], ys, marker="X", s=44, color="#d62728", zorder=5, label="dead end")
    ax.set_ylim(-0.04, 1.06)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.xaxis.get_major_locator().set_params(integer=True)      # actions are counted: no 2.5
    ax.set_xlabel("actions" if low is None else "")
    ax.set_ylabel("progress P")
    handles, labels = ax.get_legend_handles_labels()
    if len(levels) > 12:           # keep the legend readable: markers, first and last levels
        keep = [i for i, lab in enumerate(labels) if lab in ("restart", "dead end")]
        handles, labels = [handles[i] for i in keep], [labels[i] for i in keep]
    ax.legend(handles, labels, **LEGEND)
    if low is not None:
        _oracle_panel(low, orc, colours)
    return _save(fig, path)


def _figure_two(size):
    """A figure of two panels sharing the x axis: P above, the oracle's d(s) below."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(size[0], size[1] * 1.6), dpi=DPI)
    FigureCanvasAgg(fig)
    top, low = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [1.0, 0.8], "hspace": 0.12})
    for ax in (top, low):
        ax.grid(True, color="#e4e4e4", linewidth=0.7)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return fig, top, low


def _oracle_panel(ax, orc: dict, colours: dict) -> None:
    """d(s) after each action, one line per level (steps: [action, level, d, status, exact,
    cost]); the board lost: a grey band at the top, the action that lost it a red cross;
    states known only by bounds leave gaps."""
    steps = orc["steps"]
    finite = [s[2] for s in steps if s[2] is not None]
    top = max(finite + [1])
    lost_y = top * 1.12 + 0.5
    for lid, c in colours.items():
        xs = [s[0] for s in steps if s[1] == lid]
        if not xs:
            continue
        ys = [float(s[2]) if s[2] is not None else float("nan") for s in steps if s[1] == lid]
        ax.plot(xs, ys, color=c, linewidth=1.4, drawstyle="steps-post")
    lost = [s[0] for s in steps if s[3] == "dead_end"]
    if lost:
        ax.scatter(lost, [lost_y] * len(lost), marker="s", s=10, color="#888888", zorder=3,
                   label="on a lost board")
    fatal = orc.get("fatal") or []
    if fatal:
        ax.scatter([x for x, _ in fatal], [lost_y] * len(fatal), marker="X", s=60, color="#d62728", zorder=5,
                   edgecolors="black", linewidths=0.4, label="fatal action")
    ax.set_ylim(-0.04 * top, lost_y + 0.08 * top + 0.3)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("actions")
    ax.set_ylabel("oracle d(s)")
    if lost or fatal:
        ax.legend(**LEGEND)


def figure_4a(analysis: dict, path: Path) -> Path | None:
    """Usable free holes before each transfer, along every Bolt Unscrew attempt."""
    atts = [a for a in analysis.get("attempts", []) if a["level"].startswith("bolt_unscrew/")
            and any("holes_before" in m and m.get("changed") for m in a["move_log"])]
    if not atts:
        return None
    fig, ax = _figure(WIDE)
    levels = list(dict.fromkeys(a["level"] for a in atts))
    colours = dict(zip(levels, _colours(len(levels))))
    many = len(atts) > 10
    labelled = set()
    ymax = 1
    for a in atts:
        ms = [m for m in a["move_log"] if m.get("changed") and "holes_before" in m]
        xs = list(range(1, len(ms) + 1))
        ys = [m["holes_before"] if m["holes_before"] is not None else float("nan") for m in ms]
        ymax = max([ymax] + [y for y in ys if y == y])
        if many:
            label = _level_short(a["level"]) if a["level"] not in labelled else None
            labelled.add(a["level"])
        else:
            label = f"{_level_short(a['level'])}, attempt {a['number']}"
        ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.2, color=colours[a["level"]], label=label,
                alpha=0.85)
        for x, m in zip(xs, ms):
            if m.get("did") == "dead_end":
                ax.scatter([x], [m["holes_before"]], marker="X", s=60, color="#d62728", zorder=5,
                           label="dead end" if "dead end" not in labelled else None)
                labelled.add("dead end")
    ax.set_ylim(-0.3, ymax + 0.6)
    ax.set_yticks(range(int(ymax) + 1))
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("transfer within the attempt")
    ax.set_ylabel("usable free holes before it")
    ax.legend(**LEGEND)
    return _save(fig, path)


def figure_4b(capacity: dict, path: Path) -> Path | None:
    """Bolt Unscrew moves binned by the usable free holes before them: per bin, the share that
    frees a board, fills a hole, deadlocks (analytics.bolt_capacity), the bin's moves on top."""
    bins = capacity.get("by_holes_before") or []
    if not bins:
        return None
    fig, ax = _figure(SQUARE)
    kinds = (("frees", "frees a board", "#2ca02c"), ("fills", "fills a hole", "#ff7f0e"),
             ("deadlocks", "deadlocks", "#d62728"))
    xs = list(range(len(bins)))
    width = 0.26
    for i, (k, label, colour) in enumerate(kinds):
        ys = [100.0 * b[k] / b["moves"] if b["moves"] else 0.0 for b in bins]
        ax.bar([x + (i - 1) * width for x in xs], ys, width, color=colour, label=label)
    for x, b in zip(xs, bins):
        ax.annotate(f"n = {b['moves']}", (x, 102), ha="center", fontsize=8)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(b["holes_before"]) for b in bins])
    ax.set_ylim(0, 110)
    ax.set_xlabel("usable free holes before the move")
    ax.set_ylabel("moves (%)")
    ax.legend(**LEGEND)
    return _save(fig, path)


def figure_branch(arms: list[tuple[str, float | None, float | None, float | None, str]], path: Path) -> Path | None:
    """The same-state action intervention (diagnose branch): per arm its same-level completion
    rate with its bootstrap interval, labelled with the paired count. ``arms``: (arm, rate,
    low, high, "k/n")."""
    arms = [a for a in arms if a[1] is not None]
    if not arms:
        return None
    fig, ax = _figure((4.2, 3.4))
    colours = {"costly": "#d62728", "shortest": "#2ca02c"}
    xs = list(range(len(arms)))
    for x, (arm, rate, low, high, count) in zip(xs, arms):
        ax.bar([x], [100.0 * rate], 0.55, color=colours.get(arm, "#1f77b4"))
        if low is not None and high is not None:
            ax.errorbar([x], [100.0 * rate], yerr=[[100.0 * (rate - low)], [100.0 * (high - rate)]], color="#333",
                        capsize=6, linewidth=1.2)
        ax.annotate(count, (x, 104), ha="center", fontsize=9)
    ax.set_xticks(xs)
    ax.set_xticklabels([a[0] for a in arms])
    ax.set_ylim(0, 112)
    ax.set_ylabel("same-level completion (%)")
    ax.set_xlabel("branch move")
    return _save(fig, path)
