"""One module per game. Each defines ``PUZZLE``, an instance of a
``longpuzzle.engine.protocol.Puzzle`` subclass, and is found by the registry.
Level files live in ``levels/`` (format: levels/FORMAT.md)."""
