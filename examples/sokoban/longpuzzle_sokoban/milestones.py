"""Sokoban's milestones (longpuzzle's engine/milestones.py), named by its declaration: the
boxes standing on a goal square, counted from the state (``state[1]`` of ``lv[2]`` boxes, the
counter its rules keep), and the level won that every game has."""

from longpuzzle.engine.milestones import Count


def boxes_on_goals(level, state) -> tuple[int, int]:
    return int(state[1]), int(level.lv[2])


MILESTONES = (Count("boxes_on_goals", "longpuzzle_sokoban.milestones:boxes_on_goals",
                    "Do at least {k} of the {n} boxes stand on a goal square?"),)
