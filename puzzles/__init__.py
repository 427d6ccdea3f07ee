"""One module per game: rules and screen. Each defines ``PUZZLE``, an instance of a
``longpuzzle.engine.protocol.Puzzle`` subclass. The games are declared in declarations.py
(engine/declaration.py GameSpec), which the registry reads. Level files live in ``levels/``
(format: levels/FORMAT.md)."""
