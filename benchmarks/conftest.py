"""Shared set-up for the speed measurements.

Run:  python -m pytest benchmarks --benchmark-enable
Every benchmark records in ``extra_info["ops"]`` how many steps one round performs; the
summary at the end prints throughput and the ratio to the reference workload of the same
run (gymnasium's FrozenLake step loop), since absolute figures on a shared machine are noise.
Both the fastest round and the median round are shown: other work on a shared machine only
ever adds time, so the fastest round is the best estimate of the code's own speed (as
Python's timeit advises), and the median shows what a busy machine gives.
"""

import os
import sys

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
sys.path.insert(0, os.path.dirname(__file__))          # baseline.py (the code before, side by side)


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
        best, median = ops / b.stats.min, ops / b.stats.median
        rows.append((b.group or "", b.name, best, median))
        probes = b.extra_info.get("table_ops")
        if probes:
            # searches: hash-table operations (look-ups, inserts included) per second as well
            rows.append((b.group or "", b.name + " table ops", probes / b.stats.min, probes / b.stats.median))
        if b.extra_info.get("reference"):
            ref = (best, median)
    if not rows:
        return
    tr = terminalreporter
    tr.section("throughput: fastest round (median round); ratios to the reference of this run")
    for group, name, best, median in sorted(rows):
        # ratios only where the reference is the comparable workload (rules steps)
        ratio = f"{best / ref[0]:8.1f}x ({median / ref[1]:.1f}x)" if ref and group in RATIO_GROUPS else ""
        tr.write_line(f"{group:<12} {name:<58} {best:>13,.0f} /s ({median:,.0f}) {ratio}")
    # workloads that also record their CPU time (the least of the rounds, every thread of the
    # process): per CPU second is what a core does, whatever else the shared machine runs
    cpu = [b for b in bs.benchmarks if b.extra_info.get("cpu_min") and not b.extra_info.get("baseline_min")
           and b.extra_info.get("ops")]
    if cpu:
        tr.section("per CPU second (all threads of the process; the least of the rounds)")
        for b in sorted(cpu, key=lambda b: (b.group or "", b.name)):
            x = b.extra_info
            tr.write_line(f"{b.group or '':<12} {b.name:<58} {x['ops'] / x['cpu_min']:>13,.0f} /s  {x.get('unit', '')}")
    # workloads timed with today's code beside the baseline's (benchmarks/baseline.py)
    pairs = [b for b in bs.benchmarks if b.extra_info.get("baseline_min") and b.stats and b.stats.median]
    if pairs:
        tr.section("side by side with the baseline's code (benchmarks/baseline.py): fastest (median)")
        for b in sorted(pairs, key=lambda b: (b.group or "", b.extra_info.get("pair", b.name))):
            x = b.extra_info
            nb, nm = x["ops"] / b.stats.min, x["ops"] / b.stats.median
            ob, om = x["baseline_ops"] / x["baseline_min"], x["baseline_ops"] / x["baseline_median"]
            tr.write_line(f"{b.group or '':<14} {x.get('pair', b.name):<28} {nb:>9,.1f} /s ({nm:,.1f})"
                          f"  baseline {ob:>7,.1f} /s ({om:,.1f})  {nb / ob:6.1f}x ({nm / om:.1f}x)  {x.get('unit', '')}")
        tr.write_line("per CPU second (all threads; the least of the rounds), same pairs:")
        for b in sorted(pairs, key=lambda b: (b.group or "", b.extra_info.get("pair", b.name))):
            x = b.extra_info
            if x.get("cpu_min") and x.get("baseline_cpu_min"):
                nc, oc = x["ops"] / x["cpu_min"], x["baseline_ops"] / x["baseline_cpu_min"]
                tr.write_line(f"{b.group or '':<14} {x.get('pair', b.name):<28} {nc:>9,.1f} /s"
                              f"  baseline {oc:>7,.1f} /s  {nc / oc:6.1f}x  {x.get('unit', '')} per CPU second")
    # workloads timed beside another library's (extra_info side_*: its ops, fastest and median
    # round, least CPU time), rounds alternating: ours / theirs
    sides = [b for b in bs.benchmarks if b.extra_info.get("side_min") and b.stats and b.stats.median]
    if sides:
        tr.section("side by side with another library: ours / theirs, fastest round (median round)")
        for b in sorted(sides, key=lambda b: b.name):
            x = b.extra_info
            nb, nm = x["ops"] / b.stats.min, x["ops"] / b.stats.median
            ob, om = x["side_ops"] / x["side_min"], x["side_ops"] / x["side_median"]
            tr.write_line(f"{b.name:<44} {nb:>13,.0f} /s ({nm:,.0f})  {x['side_name']} {ob:>13,.0f} /s ({om:,.0f})"
                          f"  {nb / ob:6.2f}x ({nm / om:.2f}x)  {x.get('unit', '')}")
            if x.get("cpu_min") and x.get("side_cpu_min"):
                nc, oc = x["ops"] / x["cpu_min"], x["side_ops"] / x["side_cpu_min"]
                tr.write_line(f"{'  per CPU second':<44} {nc:>13,.0f} /s  {x['side_name']} {oc:>13,.0f} /s"
                              f"  {nc / oc:6.2f}x")
