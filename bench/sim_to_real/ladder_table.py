"""The sim-to-real ladder's table from the summaries `ladder` kept: per rung and traffic
class, the lab's mean over its runs with the run-to-run 95% CI (Student t), the twin's
mean over its seeds, their difference, and the verdict: within 15%, within the lab's CI
(where that is wider), or apart."""
import json
import math
import sys

# Two-sided 95% Student t quantiles by degrees of freedom.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def mean_ci(values):
    n = len(values)
    m = sum(values) / n
    if n < 2:
        return m, float("nan")
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    return m, T95.get(n - 1, 1.96) * sd / math.sqrt(n)


def metrics(run):
    """(name, value, unit) of one run's summary: FCT p50/p99 per class, paused time, CE marks, CNPs."""
    out = []
    classes = run.get("by_kind") or {"all": run}
    for kind, s in sorted(classes.items()):
        out.append((f"{kind} FCT p50", s["fct_ns"]["p50"] / 1e6, "ms"))
        out.append((f"{kind} FCT p99", s["fct_ns"]["p99"] / 1e6, "ms"))
    out.append(("paused", run["pfc"]["paused_ns"] / 1e6, "ms"))
    out.append(("CE marks", run["ecn"]["ce_marked"], ""))
    if run.get("cnp") is not None:
        out.append(("CNPs", run["cnp"], ""))
    return out


def per_run(summary):
    runs = summary.get("runs") or [summary]
    table = {}
    for r in runs:
        for name, value, unit in metrics(r):
            table.setdefault(name, ([], unit))[0].append(value)
    return table


def main():
    out, rungs = sys.argv[1], sys.argv[2:]
    print("| rung | metric | lab (mean +- 95% CI) | twin (mean) | twin - lab | verdict |")
    print("| --- | --- | --- | --- | --- | --- |")
    held = total = 0
    for rung in rungs:
        with open(f"{out}/{rung}.lab.json") as f:
            lab = per_run(json.load(f))
        with open(f"{out}/{rung}.twin.json") as f:
            twin = per_run(json.load(f))
        for name, (values, unit) in lab.items():
            if name not in twin:
                continue
            lm, ci = mean_ci(values)
            tm, _ = mean_ci(twin[name][0])
            diff = tm - lm
            rel = diff / lm if lm else (0.0 if tm == 0 else float("inf"))
            if abs(rel) <= 0.15:
                verdict = "within 15%"
            elif not math.isnan(ci) and abs(diff) <= ci:
                verdict = "within the lab's CI"
            else:
                verdict = "apart"
            total += 1
            held += verdict != "apart"
            u = f" {unit}" if unit else ""
            print(f"| {rung} | {name} | {lm:.4g} +- {ci:.2g}{u} | {tm:.4g}{u} | {rel * 100:+.0f}% | {verdict} |")
    print(f"\n{held} of {total} rows within 15% or the lab's CI")


if __name__ == "__main__":
    main()
