"""Results people can read: the report page, the paper's figures, trajectory analytics, the
leaderboard and episode videos, all built from what ``longpuzzle eval`` stored.

    data.py         reading run folders, episode trajectories and stored frames; a run's identity
    tables.py       rows of the paper's Table 2 and Table 18: runs pooled by identity, formatting
    analytics.py    trajectory analytics: level attempts, dead ends, Bolt Unscrew holes, Maze
                    Paint coverage, the LC deficit (``longpuzzle analyze``)
    figures.py      the paper's figures 3a, 3b, 3c, per-episode progress, 4a (matplotlib)
    page.py         ``longpuzzle report``: one self-contained HTML page
    leaderboard.py  ``longpuzzle leaderboard``: runs compared, reference rows (terminal, CSV,
                    JSON, HTML)
    video.py        ``longpuzzle video``: an episode's frames with its actions drawn, as MP4 or GIF
    cli.py          the commands above
"""

from longpuzzle.agents.report.page import make_report

__all__ = ["make_report"]
