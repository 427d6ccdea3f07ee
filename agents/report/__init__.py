"""Results people can read: the report page, the paper's figures, trajectory analytics, the
leaderboard and episode videos, all built from what ``longpuzzle eval`` stored.

    data.py         reading run folders, episode folders and stored frames; a run's identity
    page.py         ``longpuzzle report``: one self-contained HTML page
"""

from longpuzzle.agents.report.page import make_report

__all__ = ["make_report"]
