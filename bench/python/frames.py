#!/usr/bin/python3
"""Flow records to a pandas DataFrame: rocelab's columnar path against per-record Python
objects.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/frames.py [--flows N] [--repeat K]

Both paths start from the same C++ records (one run of N flow records; made-up values,
since the conversion, not the twin, is measured) and build the same DataFrame:

- columnar: Run.flows, numpy arrays filled in C++ one column at a time, wrapped by
  pandas without a copy (plus the host and kind Categoricals);
- objects:  Records.flows_as_dicts(), one dict per flow, then pandas.DataFrame(list).

The frames are checked equal column by column before any time is reported. Times are
best and median of K runs of each.
"""

import argparse
import gc
import statistics
import sys
import time

import numpy as np
import pandas as pd

import rocelab
from rocelab import _rocelab


def timed(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        out = None
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    records = _rocelab.synthetic_flows(args.flows, seed=1)

    def columnar():
        return rocelab.Run([records], [1]).flows

    def objects():
        df = pd.DataFrame(records.flows_as_dicts())
        df["kind"] = pd.Categorical.from_codes(df["kind"], list(_rocelab.workload_kinds))
        return df

    fast, fast_t = timed(columnar, args.repeat)
    slow, slow_t = timed(objects, max(1, min(args.repeat, 3)))
    for col in slow.columns:
        a, b = fast[col].to_numpy(), slow[col].to_numpy()
        if col == "kind":
            a, b = a.astype(str), b.astype(str)
        np.testing.assert_array_equal(a, b, err_msg=col)

    mem_fast = fast.memory_usage(deep=True).sum() / 2**20
    mem_slow = slow.memory_usage(deep=True).sum() / 2**20
    print(f"{args.flows} flow records -> DataFrame (python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"pandas {pd.__version__})")
    print(f"{'path':10s} {'best s':>9s} {'median s':>9s} {'frame MiB':>10s}")
    print(f"{'columnar':10s} {min(fast_t):9.4f} {statistics.median(fast_t):9.4f} {mem_fast:10.1f}")
    print(f"{'objects':10s} {min(slow_t):9.4f} {statistics.median(slow_t):9.4f} {mem_slow:10.1f}")
    print(f"columnar is {min(slow_t) / min(fast_t):.0f}x faster (best against best)")


if __name__ == "__main__":
    main()
