#!/usr/bin/env python3
"""Prints the ratio table of a package-benchmark run.

Reads the JMH export of one run (every benchmark measured in the same run) and the comparisons in
Benchmarks/Ratios.json, and prints one Markdown table: each subject against its raw baseline, the
ratios measured, the goal and whether it is met.

Usage: benchmark-ratios.py RUN.jmh.json Benchmarks/Ratios.json

A comparison names benchmarks as "Target.Benchmark name":
- "subject" and "baseline": two separate benchmarks; their ratio is that of their median
  throughputs (operations per second, which package-benchmark measures more finely than the
  wall-clock median; both must use the same scaling factor);
- "paired": one benchmark that times subject and baseline back to back, alternating, and records
  each pair's time ratio ×1000 in the custom metric "metric" (by default "paired ratio ×1000");
  its median is the paired ratio. On a shared machine it is the steadier figure, and when a
  comparison has one, the goal is judged on it.
The goal is one of
- "ratio <= X": subject time / baseline time;
- "speedup >= X": how many times faster the subject is (baseline time / subject time);
- "mallocs <= X": the subject's median malloc count per iteration (per 1000 operations for a
  benchmark scaled by .kilo, so 0 means none at all);
or, for a comparison shown for information, "show": "ratio" | "speedup" | "memory" ("memory"
compares the medians of the custom metric "resident KiB" of subject and baseline).
An optional "section" starts a new group of rows.

package-benchmark's JMH export carries a benchmark's secondary metrics over to the benchmarks
exported after it when they do not record that metric themselves, so every metric read here
must be one the benchmark records (all of them record mallocs).
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


def median(metrics, label):
    """The median of the metric named `label`, or else of the first whose name contains it."""
    matches = [m for l, m in metrics.items() if l == label] or [m for l, m in metrics.items() if label.lower() in l.lower()]
    return float(matches[0]["scorePercentiles"]["50.0"]) if matches else None


def show(kind, value):
    if kind == "speedup":
        return f"{value:.1f}× faster"
    if kind == "mallocs":
        return f"{value:.0f} mallocs"
    return f"{value:.2f}×"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    run = load_run(sys.argv[1])
    comparisons = json.load(open(sys.argv[2]))
    rows = []
    met = missed = absent = informational = 0
    for c in comparisons:
        if "section" in c:
            rows.append((f"**{c['section']}**", "", "", "", ""))
        goal = c.get("goal")
        kind = goal.split()[0] if goal else c["show"]
        paired = separate = None
        missing = []
        if "paired" in c:
            benchmark = run.get(key(c["paired"]))
            ratio = median(benchmark, c.get("metric", "paired ratio ×1000")) if benchmark else None
            if ratio is None:
                missing.append(c["paired"])
            else:
                paired = 1000 / ratio if kind == "speedup" else ratio / 1000
        if "subject" in c:
            subject = run.get(key(c["subject"]))
            baseline = run.get(key(c["baseline"])) if "baseline" in c else None
            if subject is None or ("baseline" in c and baseline is None):
                missing.append(c["subject"])
            elif kind == "mallocs":
                separate = median(subject, "Malloc (total)")
            elif kind == "memory":
                s, b = median(subject, "resident KiB"), median(baseline, "resident KiB")
                separate = s / b
                memory = f"{s / 1024:.1f} MiB vs {b / 1024:.1f} MiB ({s / b:.2f}×)"
            else:
                s, b = median(subject, "throughput"), median(baseline, "throughput")
                separate = s / b if kind == "speedup" else b / s
        if missing:
            rows.append((c["comparison"], "not measured in this run", "", goal or "–", "–"))
            absent += 1
            continue
        shown_paired = show(kind, paired) if paired is not None else "–"
        shown_separate = memory if kind == "memory" else (show(kind, separate) if separate is not None else "–")
        if goal is None:
            rows.append((c["comparison"], shown_paired, shown_separate, "–", "info"))
            informational += 1
            continue
        bound = float(goal.split()[-1])
        value = paired if paired is not None else separate
        ok = value is not None and (value >= bound if kind == "speedup" else value <= bound)
        met += ok
        missed += not ok
        rows.append((c["comparison"], shown_paired, shown_separate, goal, "met" if ok else "MISSED"))
    print("| Comparison | Paired (median of per-pair ratios) | Separate benchmarks (ratio of medians) | Goal | |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\n{met} met, {missed} missed, {absent} not measured; {informational} shown for information."
          " A goal is judged on the paired figure where there is one.")


if __name__ == "__main__":
    main()
