"""Jumanji's Maze stepped T steps per compiled ``lax.scan`` on N envs: the reference side of
benchmarks/test_bench_rollouts.py, run as a worker process (JAX and its numpy live apart
from this project's: jax, jaxlib and jumanji are a benchmark-only dependency).

    python jumanji_maze.py VARIANT N T        then, per line "K" on stdin: run K compiled
                                              calls, print {"wall": s, "cpu": s} (one line)
VARIANT:
    plain      vmapped ``env.step``, actions uniform over the 4 moves drawn inside the scan,
               no reset (an env past its time limit keeps stepping)
    autoreset  ``VmapAutoResetWrapper`` (an episode that ends is reset in the same step, a
               new maze generated), actions uniform over the legal moves (the observation's
               action mask): the semantics of longpuzzle's random rollout
Every call's outputs (the rewards of every step, the final state) are waited for.
"""

import json
import sys
import time

import jax
import jax.numpy as jnp
import jumanji
from jumanji.wrappers import VmapAutoResetWrapper


def build(variant: str, n: int, t: int):
    env = jumanji.make("Maze-v0")
    keys = jax.random.split(jax.random.PRNGKey(0), n)
    if variant == "plain":
        state, ts = jax.vmap(env.reset)(keys)
        step = jax.vmap(env.step)

        def one(carry, _):
            state, key = carry
            key, sub = jax.random.split(key)
            actions = jax.random.randint(sub, (n,), 0, 4)
            state, ts = step(state, actions)
            return (state, key), ts.reward
    elif variant == "autoreset":
        wrapped = VmapAutoResetWrapper(env)
        state, ts = wrapped.reset(keys)

        def one(carry, _):
            state, ts, key = carry
            key, sub = jax.random.split(key)
            logits = jnp.where(ts.observation.action_mask, 0.0, -jnp.inf)
            actions = jax.random.categorical(sub, logits)
            state, ts = wrapped.step(state, actions)
            return (state, ts, key), ts.reward
    else:
        raise SystemExit(f"unknown variant {variant}")

    @jax.jit
    def rollout(carry):
        return jax.lax.scan(one, carry, None, length=t)

    carry = (state, jax.random.PRNGKey(1)) if variant == "plain" else (state, ts, jax.random.PRNGKey(1))
    return rollout, carry


def main() -> None:
    variant, n, t = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rollout, carry = build(variant, n, t)
    carry, rewards = rollout(carry)                      # compile
    jax.block_until_ready((carry, rewards))
    print(json.dumps({"ready": True, "jax": jax.__version__, "jumanji": jumanji.__version__,
                      "devices": [str(d) for d in jax.devices()]}), flush=True)
    for line in sys.stdin:
        k = int(line)
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(k):
            carry, rewards = rollout(carry)
        jax.block_until_ready((carry, rewards))
        print(json.dumps({"wall": time.perf_counter() - w0, "cpu": time.process_time() - c0}), flush=True)


if __name__ == "__main__":
    main()
