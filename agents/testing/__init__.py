"""Testing tools that ship with longpuzzle, for its own tests and for anyone who adds a game or
an agent: the conformance suite every game must pass (``check_puzzle``, conformance.py) and
fuzzers of levels, GUI input, agent files and run results (``fuzz``)."""

from longpuzzle.agents.testing.conformance import (
    CHECKS, ConformanceError, ConformanceReport, Failure, check_puzzle, random_walk, sample_levels, walk_states,
)

__all__ = ["CHECKS", "ConformanceError", "ConformanceReport", "Failure", "check_puzzle", "random_walk",
           "sample_levels", "walk_states"]
