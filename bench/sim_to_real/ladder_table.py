"""The sim-to-real ladder's table from the summaries `ladder` kept: per rung and traffic
class, the lab's mean over its runs with the run-to-run 95% CI (Student t), the twin's
mean over its seeds, their difference, and the verdict: within 15%, within the lab's CI
(where that is wider), or apart. Where the rung has a calibrated twin's summaries too
(<rung>.twin-cal.json: calibrated idle; <rung>.twin-load.json: calibrated under the rung's
own workload), the table shows the twin before and after each calibration."""
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


# The twins a ladder may have run, in the table's order: (file suffix, column title).
SIDES = (("twin", "twin"), ("twin-cal", "calibrated twin (idle)"), ("twin-load", "calibrated twin (under load)"))


def main():
    out, rungs = sys.argv[1], sys.argv[2:]
    sides = [(suffix, title) for suffix, title in SIDES
             if any(os.path.exists(f"{out}/{r}.{suffix}.json") for r in rungs)]
    head = "| rung | metric | lab (mean +- 95% CI) |" + "".join(f" {t} | twin - lab | verdict |" for _, t in sides)
    print(head)
    print("|" + " --- |" * (3 + 3 * len(sides)))
    held = {suffix: 0 for suffix, _ in sides}
    total = {suffix: 0 for suffix, _ in sides}
    for rung in rungs:
        with open(f"{out}/{rung}.lab.json") as f:
            lab = per_run(json.load(f))
        tables = {}
        for suffix, _ in sides:
            path = f"{out}/{rung}.{suffix}.json"
            if os.path.exists(path):
                with open(path) as f:
                    tables[suffix] = per_run(json.load(f))
        for name, (values, unit) in lab.items():
            if name not in tables.get("twin", {}):
                continue
            lm, ci = mean_ci(values)
            u = f" {unit}" if unit else ""
            cells = []
            for suffix, _ in sides:
                table = tables.get(suffix)
                if table is None or name not in table:
                    cells.append("- | - | -")
                    continue
                tm, _ = mean_ci(table[name][0])
                rel, v = verdict(lm, ci, tm)
                total[suffix] += 1
                held[suffix] += v != "apart"
                cells.append(f"{tm:.4g}{u} | {rel * 100:+.0f}% | {v}")
            print(f"| {rung} | {name} | {lm:.4g} +- {ci:.2g}{u} | " + " | ".join(cells) + " |")
    print()
    for suffix, title in sides:
        if total[suffix]:
            print(f"{title}: {held[suffix]} of {total[suffix]} rows within 15% or the lab's CI")


if __name__ == "__main__":
    main()
