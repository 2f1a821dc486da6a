"""Large runs: a million flow records become a DataFrame column by column, with the same
values one Python object per record would give."""

import numpy as np
import pandas as pd

import rocelab
from rocelab import _rocelab


def test_columns_equal_per_record_objects():
    records = _rocelab.synthetic_flows(2000, seed=3)
    run = rocelab.Run([records], [3], name="synthetic", backend="synthetic")
    fast = run.flows
    slow = pd.DataFrame(records.flows_as_dicts())
    for col in slow.columns:
        if col == "kind":
            assert fast[col].tolist() == [list(_rocelab.workload_kinds)[k] for k in slow[col]]
        else:
            np.testing.assert_array_equal(fast[col].to_numpy(), slow[col].to_numpy(), err_msg=col)


def test_a_million_flows():
    n = 1_000_000
    run = rocelab.Run([_rocelab.synthetic_flows(n, seed=1)], [1])
    f = run.flows
    assert len(f) == n
    assert f["start_ns"].is_monotonic_increasing
    assert str(f["bytes"].dtype) == "uint64" and str(f["kind"].dtype) == "category"
    # One 8-byte value per flow and column, no objects: well under 200 bytes a flow.
    assert f.memory_usage(deep=True).sum() < 200 * n
    assert f["src_host"].cat.categories.size == 128


def test_empty_run_has_typed_empty_frames():
    run = rocelab.Run([_rocelab.synthetic_flows(0)], [1])
    assert len(run.flows) == 0 and str(run.flows["fct_ns"].dtype) == "int64"
    assert len(run.pauses) == 0 and str(run.pauses["start_ns"].dtype) == "int64"
    assert len(run.marks) == 0
