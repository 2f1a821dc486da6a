#!/usr/bin/python3
"""Compare two fct.txt files in the HPCC ns-3 simulator's format, side by side.

    bench/twin/compare_hpcc.py REFERENCE_FCT ROCELAB_FCT [--tolerance 0.10] [--dport N]
                               [--min-flows N] [--no-clamp] [--fct-check]

Each line of an fct.txt is `sip dip sport dport bytes start_ns fct_ns ideal_fct_ns`
(IPs in hex). The script only reads the two files: it builds, fetches and runs nothing.

Printed:
  - FCT p50/p95/p99 over all selected flows (microseconds), reference vs rocelab;
  - slowdown (fct_ns / ideal_fct_ns) p50/p95/p99 per flow-size bucket, reference vs
    rocelab, with the relative difference (rocelab - reference) / reference;
  - flows matched one to one (same sip, dip, dport, bytes, start within 1 us): the
    median, p95, p99 and max of |fct difference| / reference fct, a per-flow cross-check.

Buckets are by flow size in decimal units, the decades of the WebSearch distribution
(the HPCC project's traffic_gen/WebSearch_distribution.txt, up to 30 MB): <=10KB,
10KB-100KB, 100KB-1MB, >1MB. The HPCC project's own analysis script bins by size
percentile instead (5% steps); decades keep the bucket edges the same for both files.

Conventions, the same as the HPCC project's analysis (analysis/fct_analysis.py):
slowdown below 1 counts as 1 (the simulator's ideal FCT is twice the path's propagation
delay, plus one 1000-byte payload's store-and-forward per hop, plus the bytes with
headers at the path's slowest link, so a flow whose last packet is short can beat it by
a few ns); `--dport 100` selects the WebSearch background, `--dport 200` the incast.
Percentiles interpolate linearly between the closest ranks (numpy's default), which
moves less than nearest-rank on small buckets.

Exit status: 0 when every bucket's slowdown p50/p95/p99 is within the tolerance (and,
with --fct-check, the overall FCT percentiles too); 1 when one is not, or when a bucket
has flows in one file only; 2 on unreadable input or bad arguments.
"""

import argparse
import math
import sys
from collections import defaultdict

PERCENTILES = (50, 95, 99)

# (label, lower bound exclusive, upper bound inclusive), bytes.
BUCKETS = (
    ("<=10KB", 0, 10_000),
    ("10KB-100KB", 10_000, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    (">1MB", 1_000_000, math.inf),
)


class Flow:
    __slots__ = ("sip", "dip", "sport", "dport", "bytes", "start_ns", "fct_ns", "ideal_ns")

    def __init__(self, fields):
        self.sip = int(fields[0], 16)
        self.dip = int(fields[1], 16)
        self.sport = int(fields[2])
        self.dport = int(fields[3])
        self.bytes = int(fields[4])
        self.start_ns = int(fields[5])
        self.fct_ns = int(fields[6])
        self.ideal_ns = int(fields[7])


def read_fct(path):
    flows = []
    with open(path, encoding="ascii") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 8:
                raise ValueError(f"{path}:{lineno}: expected 8 fields, got {len(fields)}")
            try:
                flows.append(Flow(fields))
            except ValueError as e:
                raise ValueError(f"{path}:{lineno}: {e}") from None
    return flows


def percentile(sorted_values, p):
    """Linear interpolation between closest ranks (numpy.percentile's default)."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def slowdown(flow, clamp):
    s = flow.fct_ns / flow.ideal_ns if flow.ideal_ns > 0 else math.inf
    return max(s, 1.0) if clamp else s


def bucket_of(size_bytes):
    for label, lo, hi in BUCKETS:
        if lo < size_bytes <= hi:
            return label
    return BUCKETS[0][0]


def rel_diff(ref, ours):
    if math.isnan(ref) or math.isnan(ours):
        return math.nan
    if ref == 0:
        return 0.0 if ours == 0 else math.inf
    return (ours - ref) / ref


def fmt_rel(r):
    return "n/a" if math.isnan(r) else f"{r * 100:+.1f}%"


def match_flows(ref, ours):
    """Pairs flows by (sip, dip, dport, bytes), then by start time within 1 us."""
    pending = defaultdict(list)
    for f in ours:
        pending[(f.sip, f.dip, f.dport, f.bytes)].append(f)
    pairs = []
    for r in ref:
        candidates = pending.get((r.sip, r.dip, r.dport, r.bytes))
        if not candidates:
            continue
        best = min(candidates, key=lambda f: abs(f.start_ns - r.start_ns))
        if abs(best.start_ns - r.start_ns) <= 1000:
            candidates.remove(best)
            pairs.append((r, best))
    return pairs


def main(argv):
    ap = argparse.ArgumentParser(
        description="FCT and per-size-bucket slowdown percentiles of two HPCC-format "
        "fct.txt files, side by side.")
    ap.add_argument("reference", help="fct.txt from the reference (e.g. HPCC ns-3)")
    ap.add_argument("rocelab", help="fct.txt from rocelab run --hpcc")
    ap.add_argument("--tolerance", type=float, default=0.10,
                    help="largest allowed |relative difference| per bucket percentile "
                    "(default 0.10)")
    ap.add_argument("--dport", type=int, action="append",
                    help="only flows with this destination port (repeatable; "
                    "100 = WebSearch background, 200 = incast in the HPCC traces)")
    ap.add_argument("--min-flows", type=int, default=1,
                    help="do not judge a bucket with fewer reference flows than this "
                    "(its p99 is then one flow); it is still printed (default 1)")
    ap.add_argument("--no-clamp", action="store_true",
                    help="keep slowdowns below 1 as they are")
    ap.add_argument("--fct-check", action="store_true",
                    help="also judge the overall FCT percentiles against the tolerance")
    args = ap.parse_args(argv)
    if args.tolerance < 0:
        ap.error("--tolerance must be >= 0")

    try:
        ref = read_fct(args.reference)
        ours = read_fct(args.rocelab)
    except (OSError, ValueError) as e:
        print(f"compare_hpcc: {e}", file=sys.stderr)
        return 2
    if args.dport:
        keep = set(args.dport)
        ref = [f for f in ref if f.dport in keep]
        ours = [f for f in ours if f.dport in keep]

    clamp = not args.no_clamp
    failures = []
    sel = "all" if not args.dport else "dport " + ",".join(map(str, args.dport))
    print(f"reference: {args.reference} ({len(ref)} flows, {sel})")
    print(f"rocelab:   {args.rocelab} ({len(ours)} flows, {sel})")
    print(f"tolerance: {args.tolerance * 100:.1f}% per bucket percentile; slowdown "
          f"{'clamped at 1' if clamp else 'not clamped'}; percentiles linear")
    if len(ref) != len(ours):
        print(f"note: flow counts differ ({len(ref)} vs {len(ours)}): a flow missing "
              "from one file did not complete there")
    print()

    print("FCT (us), all selected flows")
    print(f"{'pctl':>5} {'reference':>12} {'rocelab':>12} {'diff':>8}")
    ref_fct = sorted(f.fct_ns / 1000.0 for f in ref)
    our_fct = sorted(f.fct_ns / 1000.0 for f in ours)
    for p in PERCENTILES:
        a, b = percentile(ref_fct, p), percentile(our_fct, p)
        r = rel_diff(a, b)
        flag = ""
        if args.fct_check and not (abs(r) <= args.tolerance):
            flag = "  <-- over"
            failures.append(f"FCT p{p} {fmt_rel(r)}")
        print(f"{'p' + str(p):>5} {a:12.3f} {b:12.3f} {fmt_rel(r):>8}{flag}")
    print()

    print("slowdown (fct / ideal fct) per flow-size bucket")
    print(f"{'bucket':>11} {'flows':>11} {'pctl':>5} {'reference':>10} {'rocelab':>10} "
          f"{'diff':>8}")
    by_ref = defaultdict(list)
    by_our = defaultdict(list)
    for f in ref:
        by_ref[bucket_of(f.bytes)].append(slowdown(f, clamp))
    for f in ours:
        by_our[bucket_of(f.bytes)].append(slowdown(f, clamp))
    for label, _, _ in BUCKETS:
        a_vals = sorted(by_ref[label])
        b_vals = sorted(by_our[label])
        counts = f"{len(a_vals)}/{len(b_vals)}"
        if not a_vals and not b_vals:
            print(f"{label:>11} {counts:>11}   (no flows)")
            continue
        if not a_vals or not b_vals:
            print(f"{label:>11} {counts:>11}   flows in one file only  <-- over")
            failures.append(f"{label}: flows in one file only ({counts})")
            continue
        judged = len(a_vals) >= args.min_flows
        for i, p in enumerate(PERCENTILES):
            a, b = percentile(a_vals, p), percentile(b_vals, p)
            r = rel_diff(a, b)
            flag = ""
            if not judged:
                flag = "  (not judged: few flows)"
            elif not (abs(r) <= args.tolerance):
                flag = "  <-- over"
                failures.append(f"{label} p{p} {fmt_rel(r)}")
            head = f"{label:>11} {counts:>11}" if i == 0 else " " * 23
            print(f"{head} {'p' + str(p):>5} {a:10.3f} {b:10.3f} {fmt_rel(r):>8}{flag}")
    print()

    pairs = match_flows(ref, ours)
    if pairs:
        errs = sorted(abs(b.fct_ns - a.fct_ns) / a.fct_ns for a, b in pairs if a.fct_ns > 0)
        print(f"per flow: {len(pairs)} of {len(ref)} reference flows matched; "
              f"|fct diff| / reference fct: median {percentile(errs, 50) * 100:.2f}%, "
              f"p95 {percentile(errs, 95) * 100:.2f}%, p99 {percentile(errs, 99) * 100:.2f}%, "
              f"max {errs[-1] * 100:.2f}%")
    else:
        print("per flow: no flows matched (different flow sets?)")
    print()

    if failures:
        print(f"FAIL: {len(failures)} over {args.tolerance * 100:.1f}%: " + "; ".join(failures))
        return 1
    print(f"OK: every judged percentile within {args.tolerance * 100:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
