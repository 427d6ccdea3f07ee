"""The diagnostics lab (issue 39): the LongPuzzleBench paper's section 5 experiments, run on
exact, restored states with any agent ``eval`` accepts (PAPERS.md section 5; ``longpuzzle
diagnose``). Every continuation is an ordinary episode folder that ``replay`` verifies; every
table carries paired counts and source-level bootstrap intervals (stats.py).

    stats.py        source-level (cluster) bootstrap intervals, paired effects, counts
    cli.py          the ``longpuzzle diagnose`` command group; each experiment adds its command
    checkpoints.py  the checkpoints folder: validated dead ends and controls, load_checkpoints,
                    Checkpoint.restore / continue_with
    checkpoint_sources.py  ``diagnose checkpoints``: candidates from recorded runs or from scratch

The experiments' modules (checkpoints, the D.1 harness, takeover RQ2, retry RQ3, rules RQ4,
branch RQ1, judge) are listed in docs/guides/diagnostics.md with what each writes.
"""
