#!/usr/bin/env python3
"""Prints the ratio table of a package-benchmark run.

Reads the JMH export of one run (every benchmark measured in the same run) and the comparisons in
Benchmarks/Ratios.json, and prints one Markdown table: each subject against its raw baseline, the
ratio of their medians, the goal and whether it is met.

Usage: benchmark-ratios.py RUN.jmh.json Benchmarks/Ratios.json
Time ratios use the median throughput (operations per second) of both sides, which package-benchmark
measures more finely than the wall-clock median; both sides must use the same scaling factor.
A "paired" goal reads one benchmark that times subject and baseline back to back and records each
pair's ratio ×1000 in a custom metric named "paired ratio …" (for costs, such as fsync, whose
latency drifts too much between separate benchmarks).
"""
import json
import sys


def load_run(path):
    results = {}
    for entry in json.load(open(path)):
        name = entry["benchmark"].removeprefix("package.benchmark.")
        metrics = {"throughput": entry["primaryMetric"]}
        for label, metric in entry.get("secondaryMetrics", {}).items():
            metrics[label] = metric
        results[name] = metrics
    return results


def key(name):
    return name.replace(" ", "_")


def median(metrics, label_part):
    for label, metric in metrics.items():
        if label_part.lower() in label.lower():
            return float(metric["scorePercentiles"]["50.0"])
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    run = load_run(sys.argv[1])
    comparisons = json.load(open(sys.argv[2]))
    rows = []
    met = missed = absent = 0
    for c in comparisons:
        subject = run.get(key(c["subject"]))
        baseline = run.get(key(c["baseline"])) if c.get("baseline") else None
        goal = c["goal"]
        if subject is None or (c.get("baseline") and baseline is None):
            rows.append((c["comparison"], "not measured in this run", goal, "–"))
            absent += 1
            continue
        kind, bound = goal.split()[0], float(goal.split()[-1])
        if kind == "paired":  # one benchmark timing subject and baseline back to back, pair by pair
            value = median(subject, "paired ratio") / 1000
            shown = f"{value:.2f}× (paired)"
            ok = value <= bound
        elif kind == "mallocs":
            value = median(subject, "malloc")
            shown = f"{value:.0f} mallocs"
            ok = value is not None and value <= bound
        else:
            s, b = median(subject, "throughput"), median(baseline, "throughput")
            if kind == "speedup":  # how many times faster the subject is than the baseline
                value = s / b
                shown = f"{value:.1f}× faster"
                ok = value >= bound
            else:  # "ratio": subject time / baseline time
                value = b / s
                shown = f"{value:.2f}×"
                ok = value <= bound
        met += ok
        missed += not ok
        rows.append((c["comparison"], shown, goal, "met" if ok else "MISSED"))
    print("| Comparison | Measured (medians, same run) | Goal | |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\n{met} met, {missed} missed, {absent} not measured")


if __name__ == "__main__":
    main()
