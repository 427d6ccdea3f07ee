"""Two small speed items of the rules env (issue 41), side by side with the code before
(baseline.py's ENV_STEPS_BASELINE, in a worker process; rounds alternate so both see the same
load): gymnasium.make with action_mask=False, which now takes the inlined step too (it ran at
0.87x of masks on), and make_vec with one env, whose step checks and infos were trimmed."""

import pytest

from baseline import ENV_STEPS_BASELINE, Baseline, env_stepper, side_by_side

STEPS = 20_000


@pytest.fixture(scope="module")
def baseline():
    b = Baseline(ENV_STEPS_BASELINE)
    yield b
    b.close()


@pytest.mark.parametrize("kind, mask", [("make", False), ("make", True), ("vec1", True)],
                         ids=["make-nomask", "make-mask", "make_vec-1"])
def test_env_steps(benchmark, baseline, kind, mask):
    req = {"op": "env_steps", "kind": kind, "mask": mask, "steps": STEPS}
    run = env_stepper(kind, mask)
    run(STEPS)                                          # warm both sides
    baseline(**req)
    benchmark.group = "env paths"
    side_by_side(benchmark, lambda: run(STEPS), lambda: baseline(**req), 9, STEPS, STEPS, unit="env steps",
                 pair=benchmark.name.replace("test_", ""))
