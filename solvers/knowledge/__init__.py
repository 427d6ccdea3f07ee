"""The built-in games' solver knowledge, one module each (``KNOWLEDGE = SomeKnowledge()``,
named by each game's declaration), with their compiled hooks (``*_kernels.py``). The base
class and the lookup are solvers/game_knowledge.py's, re-exported here.
"""

from longpuzzle.solvers.game_knowledge import Knowledge, field_spec, knowledge

__all__ = ["Knowledge", "field_spec", "knowledge"]
