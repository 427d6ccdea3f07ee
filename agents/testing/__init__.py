"""Testing tools that ship with longpuzzle, for its own tests and for anyone who adds a game or
an agent: fuzzers of levels, GUI input, agent files and run results (``fuzz``)."""
