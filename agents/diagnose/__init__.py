"""The diagnostics lab (issue 39): the LongPuzzleBench paper's section 5 experiments, run on
exact, restored states with any agent ``eval`` accepts (PAPERS.md section 5; ``longpuzzle
diagnose``; docs/guides/diagnostics.md). Every continuation is an ordinary episode folder that
``replay`` verifies; every table carries paired counts and source-level bootstrap intervals.

    cli.py                 the ``longpuzzle diagnose`` group: a table of subcommands, each
                           module loaded only when its command runs
    stats.py               source-level (cluster) bootstrap intervals, paired effects, counts
    study.py               the study runner: units x conditions on a fixed interleaved schedule,
                           infrastructure failures replaced, the study folder (contract 3)
    texts.py               the agent's own text per recorded step (conversation.jsonl), which
                           the fixed regular expressions of RQ1 and RQ2 code
    checkpoints.py         the checkpoints folder (contract 1): validated dead ends and controls,
                           load_checkpoints, Checkpoint.restore / continue_with
    checkpoint_sources.py  ``diagnose checkpoints``: candidates from recorded runs or generated
                           from scratch by the solvers' policies
    takeover.py            RQ2, the certified dead-end takeover (conditions A / B / C, endpoints,
                           attribution, Tables 13 / 15) and its command ``diagnose takeover``
    retry.py               RQ3's parts: sources (a certified failure, a verified restart), the
                           memories M0..M3 (M3 the clue memory), a retry's endpoints
    retry_study.py         the RQ3 study on the runner and its tables
    retry_cli.py           ``diagnose retry``
    rules.py               RQ4's rule cards (declared in each GameSpec) and rule probes, graded
                           without a judge
    workflow.py            RQ4's P1 controller: entry and verified advancement, Bolt's restart
                           after a certified deadlock
    rules_agent.py         ``rulebook``, the scripted stand-in agent of RQ4
    rules_study.py         the RQ4 sessions, the 2 x 2 K x P study, its contrasts and Figure 5c
    rules_cli.py           ``diagnose rules``
    branch.py              RQ1's same-state action intervention (costly vs shortest-path move)
    rq1.py                 RQ1's analyses of recorded runs (LC deficit, Figure 4b, Maze Paint
                           fifths, stated reasons)
    branch_cli.py          ``diagnose branch run`` and ``diagnose branch analyze``
    judge.py               FlashAdventure's CUA-as-a-Judge measured against the exact evaluator
                           and its command ``diagnose judge``

Outside this package: the D.1 harness and the takeover context (agents/api.py ``Takeover``,
agents/harness/takeover.py, ``continue_episode``), the paper-like scripted agents
(agents/paper_agents.py), the shared agent options (agents/agent_options.py) and the report's
Diagnostics section (agents/report).
"""
