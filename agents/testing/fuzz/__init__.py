"""Fuzzing and soak testing: bounded, seeded generators of hostile input for the engine, the
screens, the harness and its files, shared by the test suite (tests/agents/testing/test_fuzz.py) and the
long soak run (``longpuzzle soak``).

    gui.py        GUI actions of every type, well-formed and malformed, on every screen; soak()
    levels.py     mutated level records: refused by validation, or they work (no crash, no hang)
    snapshots.py  tampered suite snapshots and session checkpoints: refused, or they keep working
    agents.py     randomised hostile agent files, isolated; their episodes checked end to end
    results.py    every single-field tampering of a genuine run: each refused by its verification
    worker.py     checks run in a worker process that is killed on a hang
    cli.py        ``longpuzzle soak``
"""
