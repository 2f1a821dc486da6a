"""Unknown is not zero in Python too: flows carry retransmits_measured / cnps_measured, and
totals give None for a count nothing measured, consistent with the run's summary (null)
and the reports ("not measured").

A real lab's verbs jobs store their flows with the flags False (an RDMA NIC keeps no per-QP
count); here a twin run is stored and its rows are marked the way such a run's are, in the
store's own SQLite file, then read back through rocelab.Store."""

import sqlite3

import numpy as np

import rocelab


def test_a_twin_run_measures_every_flow(lab, small_incast):
    run = lab.run(small_incast)
    f = run.flows
    assert str(f["retransmits_measured"].dtype) == "bool" and str(f["cnps_measured"].dtype) == "bool"
    assert f["retransmits_measured"].all() and f["cnps_measured"].all()
    assert isinstance(run.totals["retransmits"], int) and isinstance(run.totals["cnps"], int)
    assert run.summary()["retransmits"] == run.totals["retransmits"]


def test_unmeasured_flows_and_totals_read_back_as_not_measured(lab, small_incast, db):
    run = lab.run(small_incast)
    run_id = run.ids[0]
    before = rocelab.Store(db).load(run_id)
    assert before.flows["retransmits_measured"].all()

    # Hosts 1 and 2 as hardware NICs that count neither; the run's totals unmeasured.
    with sqlite3.connect(db) as c:
        c.execute("UPDATE flows SET retransmits_measured = 0, cnps_measured = 0 WHERE run = ? AND src IN (1, 2)",
                  (run_id,))
        c.execute("UPDATE totals SET retransmits_measured = 0, cnps_measured = 0 WHERE run = ?", (run_id,))

    after = rocelab.Store(db).load(run_id)
    f = after.flows
    unmeasured = f["src"].isin([1, 2]).to_numpy()
    assert unmeasured.sum() == 2
    np.testing.assert_array_equal(f["retransmits_measured"].to_numpy(), ~unmeasured)
    np.testing.assert_array_equal(f["cnps_measured"].to_numpy(), ~unmeasured)
    # The counts stay as stored (0 means nothing once the flag is False).
    assert (f.loc[unmeasured, "retransmits"] == 0).all()

    # Totals: None, as the summary's null; the other totals are untouched.
    assert after.totals["retransmits"] is None and after.totals["cnps"] is None
    assert after.totals["ce_marked"] == before.totals["ce_marked"]
    summary = after.summary()
    assert summary["retransmits"] is None and summary["cnp"] is None

    # The dict path (bench/python's baseline) carries the same flags as the columns.
    dicts = after.records[0].flows_as_dicts()
    assert [d["retransmits_measured"] for d in dicts] == list(f["retransmits_measured"])
    assert [d["cnps_measured"] for d in dicts] == list(f["cnps_measured"])


def test_totals_over_repeats_are_unknown_when_one_repeat_did_not_measure(lab, small_incast, db):
    a = lab.run(small_incast)
    b = lab.run(small_incast)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE totals SET retransmits_measured = 0 WHERE run = ?", (b.ids[0],))
    s = rocelab.Store(db)
    both = rocelab.Run([s.load(a.ids[0]).records[0], s.load(b.ids[0]).records[0]], [1, 2])
    assert both.totals["retransmits"] is None
    assert both.totals["cnps"] == 2 * s.load(a.ids[0]).totals["cnps"]
