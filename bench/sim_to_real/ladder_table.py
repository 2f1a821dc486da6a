"""The sim-to-real ladder's table from the summaries `ladder` kept: per rung and traffic
class, the lab's mean over its runs with the run-to-run 95% CI (Student t), the twin's
mean over its seeds, their difference, and the verdict: within 15%, within the lab's CI
(where that is wider), or apart. Where the rung has a calibrated twin's summaries too
(<rung>.twin-cal.json), the table shows the twin before and after calibration."""
import json
import math
import os
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


def verdict(lab_mean, ci, twin_mean):
    diff = twin_mean - lab_mean
    rel = diff / lab_mean if lab_mean else (0.0 if twin_mean == 0 else float("inf"))
    if abs(rel) <= 0.15:
        return rel, "within 15%"
    if not math.isnan(ci) and abs(diff) <= ci:
        return rel, "within the lab's CI"
    return rel, "apart"


def main():
    out, rungs = sys.argv[1], sys.argv[2:]
    calibrated = any(os.path.exists(f"{out}/{r}.twin-cal.json") for r in rungs)
    if calibrated:
        print("| rung | metric | lab (mean +- 95% CI) | twin | twin - lab | verdict | calibrated twin | twin - lab | verdict |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    else:
        print("| rung | metric | lab (mean +- 95% CI) | twin (mean) | twin - lab | verdict |")
        print("| --- | --- | --- | --- | --- | --- |")
    held = {"twin": 0, "calibrated": 0}
    total = {"twin": 0, "calibrated": 0}
    for rung in rungs:
        with open(f"{out}/{rung}.lab.json") as f:
            lab = per_run(json.load(f))
        with open(f"{out}/{rung}.twin.json") as f:
            twin = per_run(json.load(f))
        cal = None
        if os.path.exists(f"{out}/{rung}.twin-cal.json"):
            with open(f"{out}/{rung}.twin-cal.json") as f:
                cal = per_run(json.load(f))
        for name, (values, unit) in lab.items():
            if name not in twin:
                continue
            lm, ci = mean_ci(values)
            u = f" {unit}" if unit else ""
            cells = []
            for side, table in (("twin", twin), ("calibrated", cal)):
                if table is None or name not in table:
                    if calibrated and side == "calibrated":
                        cells.append("- | - | -")
                    continue
                tm, _ = mean_ci(table[name][0])
                rel, v = verdict(lm, ci, tm)
                total[side] += 1
                held[side] += v != "apart"
                cells.append(f"{tm:.4g}{u} | {rel * 100:+.0f}% | {v}")
            print(f"| {rung} | {name} | {lm:.4g} +- {ci:.2g}{u} | " + " | ".join(cells) + " |")
    print(f"\ntwin: {held['twin']} of {total['twin']} rows within 15% or the lab's CI")
    if total["calibrated"]:
        print(f"calibrated twin: {held['calibrated']} of {total['calibrated']} rows within 15% or the lab's CI")


if __name__ == "__main__":
    main()
