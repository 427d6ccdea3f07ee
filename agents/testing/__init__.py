"""Testing tools that ship with longpuzzle, for its own tests and for anyone who adds a game or
an agent:

    conformance.py   the conformance suite every game must pass (``check_puzzle``)
    fuzz/            fuzzers of levels, GUI input, agent files and run results
    endpoints.py     a real HTTP endpoint on 127.0.0.1 that speaks the model wire protocols
                     (OpenAI Chat Completions and Responses, Anthropic Messages) with a
                     scripted "model", for tests and benchmarks of model agents
    wire_schema.py   what each wire's API accepts in a request, so that endpoint refuses what
                     the real API refuses
"""

from longpuzzle.agents.testing.conformance import (
    CHECKS, ConformanceError, ConformanceReport, Failure, check_puzzle, random_walk, sample_levels, walk_states,
)

__all__ = ["CHECKS", "ConformanceError", "ConformanceReport", "Failure", "check_puzzle", "random_walk",
           "sample_levels", "walk_states"]
