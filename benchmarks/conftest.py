"""Shared set-up for the speed measurements.

Run:  python -m pytest benchmarks --benchmark-enable
Every benchmark records in ``extra_info["ops"]`` how many steps one round performs; the
summary at the end prints throughput and the ratio to the reference workload of the same
run (gymnasium's FrozenLake step loop), since absolute figures on a shared machine are noise.
"""

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


RATIO_GROUPS = ("single", "batched")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    bs = getattr(config, "_benchmarksession", None)
    if bs is None or not getattr(bs, "benchmarks", None):
        return
    rows = []
    ref = None
    for b in bs.benchmarks:
        ops = b.extra_info.get("ops")
        if not ops or not b.stats or not b.stats.median:
            continue
        rate = ops / b.stats.median
        rows.append((b.group or "", b.name, rate))
        if b.extra_info.get("reference"):
            ref = rate
    if not rows:
        return
    tr = terminalreporter
    tr.section("throughput (median round), and ratio to the reference measured in this run")
    for group, name, rate in sorted(rows):
        # ratios only where the reference is the comparable workload (rules steps)
        ratio = f"{rate / ref:8.1f}x" if ref and group in RATIO_GROUPS else ""
        tr.write_line(f"{group:<12} {name:<60} {rate:>14,.0f} /s {ratio}")
