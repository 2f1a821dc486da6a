"""Running on the twin from Python: Run frames (dtypes, sizes, values), summary, plots,
and the run store."""

import json
import os
import pathlib
import threading
import time

import numpy as np
import pandas as pd
import pytest

import rocelab
from conftest import EXAMPLES, run_cli

FLOW_DTYPES = {
    "repeat": "uint32", "seed": "uint64", "src": "uint32", "dst": "uint32", "src_host": "category",
    "dst_host": "category", "qp": "uint32", "priority": "uint8", "kind": "category", "bytes": "uint64",
    "start_ns": "int64", "end_ns": "int64", "fct_ns": "int64", "ideal_fct_ns": "int64", "slowdown": "float64",
    "completed": "bool", "retransmits": "uint64", "ce_marked": "uint64", "cnps": "uint64", "tag": "uint64",
    "retransmits_measured": "bool", "cnps_measured": "bool",
}


def dtypes(df):
    return {c: str(t) for c, t in df.dtypes.items()}


def test_incast_flows_frame(lab, small_incast):
    run = lab.run(small_incast)
    assert run.status == "completed"
    f = run.flows
    assert dtypes(f) == FLOW_DTYPES
    assert len(f) == 4
    assert f["completed"].all()
    assert (f["bytes"] == 64 * 1024).all()
    assert (f["dst"] == 0).all() and sorted(f["src"]) == [1, 2, 3, 4]
    assert list(f["kind"].unique()) == ["incast"]
    assert (f["fct_ns"] >= f["ideal_fct_ns"]).all()
    assert np.allclose(f["slowdown"], f["fct_ns"] / f["ideal_fct_ns"])
    assert (f["end_ns"] - f["start_ns"] == f["fct_ns"]).all()
    assert set(f["src_host"]) <= set(run.records[0].hosts)


def test_summary_matches_the_cli(lab, tmp_path):
    run = lab.run(EXAMPLES / "incast-16to1.yaml")
    s = run.summary()
    cli = run_cli("run", str(EXAMPLES / "incast-16to1.yaml"), "--json", "--out", str(tmp_path / "cli"), cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    for key in ("flows", "completed", "fct_ns", "slowdown", "pfc", "ecn", "cnp", "drops", "retransmits"):
        assert s[key] == expected[key], key
    f = run.flows
    assert len(f) == expected["flows"] == 16
    assert f["fct_ns"].max() == expected["fct_ns"]["max"]
    # Summaries come from the same records the frames hold.
    assert run.totals["ce_marked"] == expected["ecn"]["ce_marked"]


def test_pfc_only_incast_pauses_and_frames_have_their_dtypes(lab):
    exp = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml",
                            {"switch.ecn.enabled": False, "nic.dcqcn.enabled": False, "switch.buffer_bytes": "2MiB",
                             "workload.incast.flow_bytes": "256KiB"})
    run = lab.run(exp)
    p = run.pauses
    assert len(p) > 0
    assert dtypes(p) == {"repeat": "uint32", "seed": "uint64", "device": "category", "port": "uint32",
                         "priority": "uint8", "start_ns": "int64", "end_ns": "int64", "duration_ns": "int64",
                         "source": "category"}
    assert (p["duration_ns"] == p["end_ns"] - p["start_ns"]).all()
    assert set(p["priority"]) == {3}
    assert set(p["source"]) == {"model"}
    assert set(p["device"]) <= set(run.records[0].devices)
    assert p["duration_ns"].sum() == run.totals["paused_ns"]
    assert run.summary()["drops"] == 0  # lossless

    q = run.queues
    assert dtypes(q) == {"repeat": "uint32", "seed": "uint64", "device": "category", "port": "uint32",
                         "queue": "uint8", "t_ns": "int64", "bytes": "uint64"}
    assert len(q) > 0 and q["bytes"].max() > 0
    c = run.counters
    assert dtypes(c) == {"repeat": "uint32", "seed": "uint64", "device": "category", "port": "uint32",
                         "name": "category", "t_ns": "int64", "value": "uint64"}
    assert "pfc_tx_frames" in set(c["name"])
    pfc_tx = c[c["name"] == "pfc_tx_frames"]["value"].sum()
    assert pfc_tx > 0
    m = run.marks
    assert list(m.columns) == ["repeat", "seed", "kind", "device", "port", "priority", "t_ns", "src", "dst", "qp",
                               "source"]
    # No ECN in this run: no marks anywhere.
    assert run.flows["ce_marked"].sum() == 0 and len(m) == 0


def test_repeats_have_their_own_seeds_and_are_one_stored_run(lab, small_incast, db):
    exp = small_incast.with_overrides({"repeats": 3, "seed": 10, "workload.incast.start_jitter_ns": "2us"})
    run = lab.run(exp)
    assert run.seeds == [10, 11, 12]
    f = run.flows
    assert len(f) == 12
    assert sorted(f["repeat"].unique()) == [0, 1, 2]
    assert f.groupby("repeat")["seed"].first().tolist() == [10, 11, 12]
    # One stored run, as `rocelab run` stores it (experiments/run/run_session.hpp).
    assert len(run.ids) == 1
    runs = rocelab.open_store(db).runs()
    assert runs["id"].tolist() == run.ids
    assert runs["status"].tolist() == ["completed"]
    assert runs["seed"].tolist() == [10]
    assert runs["workload.incast.start_jitter_ns"].iloc[0] == 2000  # the field's unit: ns
    s = run.summary()
    assert s["flows"] == 12 and len(s["runs"]) == 3


def test_a_stored_three_repeat_run_loads_with_repeats_0_1_and_2(lab, small_incast, db):
    # One stored run; each record keeps its repeat (schema v4), and repeat i ran seed + i,
    # row for row as the run's own frames say.
    run = lab.run(small_incast.with_overrides({"repeats": 3}))
    assert len(run.ids) == 1
    back = rocelab.open_store(db).load(run.ids[0])
    assert sorted(back.flows["repeat"].unique()) == [0, 1, 2]
    cols = ["repeat", "seed", "src", "dst", "bytes", "start_ns", "fct_ns"]
    here = run.flows[cols].sort_values(cols).reset_index(drop=True)
    there = back.flows[cols].sort_values(cols).reset_index(drop=True)
    pd.testing.assert_frame_equal(here, there)


def test_a_run_cut_short_is_partial_in_the_run_and_the_store(lab, db):
    # 100 ns of virtual time: none of the 16 flows completes (the store's rule, run_ending.hpp).
    run = lab.run(str(EXAMPLES / "incast-16to1.yaml"), overrides={"twin.stop_ns": "100"}, name="cut")
    assert run.status == "partial"
    row = rocelab.open_store(db).runs(name="cut").iloc[0]
    assert row["status"] == "partial"
    assert row["error"] == "0 of 16 flows completed"


def test_stored_run_loads_back_equal(lab, db):
    exp = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml", {"switch.buffer_bytes": "2MiB"})
    run = lab.run(exp, overrides={"switch.ecn.kmin_bytes": "20KiB"}, name="stored")
    store = rocelab.open_store(db)
    row = store.runs(name="stored").iloc[0]
    assert row["status"] == "completed" and row["backend"] == "twin"
    assert row["switch.ecn.kmin_bytes"] == 20 * 1024
    back = store.load(int(row["id"]))
    assert back.status == "completed"
    cols = ["src", "dst", "qp", "bytes", "start_ns", "end_ns", "fct_ns", "ideal_fct_ns", "ce_marked", "cnps"]
    pd.testing.assert_frame_equal(back.flows[cols].reset_index(drop=True), run.flows[cols].reset_index(drop=True))
    assert len(back.pauses) == len(run.pauses)
    assert back.summary()["fct_ns"] == run.summary()["fct_ns"]
    assert rocelab.open_store(db).latest().ids == [int(row["id"])]


def test_not_storing(small_incast, tmp_path):
    lab = rocelab.twin(db=None)
    run = lab.run(small_incast)
    assert run.ids == [] and run.store_path is None
    assert not list(tmp_path.iterdir())


def test_run_releases_the_gil(lab):
    exp = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml", {"workload.incast.rounds": 20})
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.002)

    t = threading.Thread(target=tick)
    t.start()
    started = time.monotonic()
    lab.run(exp)
    ended = time.monotonic()
    stop.set()
    t.join()
    during = [x for x in ticks if started < x < ended]
    # With the GIL held for the whole run the thread could not tick at all.
    assert ended - started < 0.05 or len(during) >= 3


def test_plots(lab):
    import matplotlib.pyplot as plt
    exp = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml",
                            {"switch.ecn.enabled": False, "nic.dcqcn.enabled": False, "switch.buffer_bytes": "2MiB"})
    run = lab.run(exp)
    ax = run.plot_fct_cdf()
    assert len(ax.get_lines()) == 1
    ys = ax.get_lines()[0].get_ydata()
    assert ys[-1] == pytest.approx(1.0)
    ax2 = run.plot_fct_cdf(slowdown=True, by=None)
    assert ax2.get_xlabel().startswith("slowdown")
    ax3 = run.plot_pauses()
    assert len(ax3.get_yticklabels()) == run.pauses.groupby(["device", "port", "priority"], observed=True).ngroups
    plt.close("all")


def test_a_run_shows_as_its_report_and_displays_nothing_itself(lab, small_incast, monkeypatch):
    run = lab.run(small_incast)
    if not hasattr(rocelab._rocelab, "report_html"):
        assert run._repr_html_() is None  # a notebook falls back to the plain repr
        with pytest.raises(rocelab.UnavailableError):
            run.report()
        return
    try:
        import IPython.display
    except ImportError:
        IPython = None
    if IPython is not None:
        def no_display(*args, **kwargs):
            raise AssertionError("Run.report() displayed something")
        monkeypatch.setattr(IPython.display, "display", no_display)
    html = run._repr_html_()
    assert "<svg" in html and html is run.html  # the page is made once
    shown = run.report()
    assert getattr(shown, "data", shown) == html  # an IPython HTML object, or the text without IPython
    # A run without records here (a controller's, without its store) has no report: the plain repr.
    assert rocelab.Run([], [], "remote", "twin")._repr_html_() is None


def open_files_of_this_process(path):
    fds = pathlib.Path("/proc/self/fd")
    return [fd for fd in fds.iterdir() if os.path.realpath(fd) == os.path.realpath(path)]


def test_a_store_closes_at_the_end_of_its_with_block_and_refuses_use_after(lab, small_incast, db):
    run = lab.run(small_incast)
    lab.store.close()  # the lab's own connection
    with rocelab.open_store(db) as store:
        assert not store.closed and open_files_of_this_process(db)
        assert store.load(run.ids[0]).status == "completed"
    assert store.closed
    assert not open_files_of_this_process(db)  # the SQLite connection is gone, not waiting for the GC
    for use in (store.runs, lambda: store.load(run.ids[0]), lambda: store.info(run.ids[0]), store.latest):
        with pytest.raises(rocelab.StoreError, match=f"run store {db} is closed"):
            use()
    store.close()  # a second close does nothing
    # Run.load with a path opens the store for the call only.
    assert rocelab.Run.load(db, run.ids[0]).ids == run.ids
    assert not open_files_of_this_process(db)


def test_runs_has_the_results_and_a_column_per_parameter_and_the_spec_on_request(lab, db):
    exp = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml")
    run = lab.run(exp, overrides={"switch.ecn.kmin_bytes": "20KiB", "twin.stop_ns": "50ms"}, name="listed")
    lab.run(exp, overrides={"switch.ecn.enabled": False}, name="listed")
    with rocelab.open_store(db) as store:
        runs = store.runs(name="listed")
        assert "parameters" not in runs.columns and "spec_yaml" not in runs.columns
        assert list(runs.columns[:9]) == ["id", "name", "backend", "seed", "status", "error", "started", "ended",
                                          "sweep"]
        row = runs.iloc[0]
        # Parameters: one column each, in the field's unit, typed.
        assert str(runs["switch.ecn.kmin_bytes"].dtype) == "Int64" and row["switch.ecn.kmin_bytes"] == 20 * 1024
        assert row["twin.stop_ns"] == 50_000_000
        assert runs["switch.ecn.enabled"].tolist() == [True, False]
        assert runs["name"].tolist() == ["listed", "listed"]  # the run's own column, not a parameter's
        # Results: the run's summary numbers, named as `rocelab runs show` names them.
        s = run.summary()
        assert row["flows"] == s["flows"] == 16 and row["completed"] == s["completed"]
        assert row["fct p99 ns"] == s["fct_ns"]["p99"] and row["slowdown p99"] == pytest.approx(s["slowdown"]["p99"])
        assert row["CE marked"] == s["ecn"]["ce_marked"] and row["pause frames"] == s["pfc"]["pause_frames"]
        assert row["incast fct p99 ns"] == s["by_kind"]["incast"]["fct_ns"]["p99"]
        # The same numbers as the CLI's listing.
        done = run_cli("runs", "--db", str(db), "--json")
        assert done.returncode == 0, done.stderr
        cli = next(r for r in json.loads(done.stdout) if r["id"] == row["id"])["results"]
        assert cli["all"]["fct_p99_ns"] == row["fct p99 ns"] and cli["ce_marked"] == row["CE marked"]
        # The spec only on request; results can be left out.
        assert "spec_yaml" not in store._store.runs()[0]
        with_spec = store.runs(name="listed", with_spec=True)
        assert list(with_spec.columns) == list(runs.columns) + ["spec_yaml"]
        assert with_spec["spec_yaml"].iloc[0] == store.info(row["id"])["spec_yaml"]
        assert "fct p99 ns" not in store.runs(results=False).columns


def test_stored_runs_compare_side_by_side_as_runs_diff_does(lab, db, tmp_path):
    exp = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml")
    lab.run(exp, name="cmp-a")
    lab.run(exp, overrides={"switch.ecn.kmin_bytes": "5KB", "switch.ecn.kmax_bytes": "20KB"}, name="cmp-b")
    store = rocelab.open_store(db)
    ids = store.runs()["id"].tolist()[-2:]
    cmp = store.compare(ids)
    assert {"switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes", "name"} <= set(cmp.settings.index)
    assert cmp.results.loc["flows", ids[0]] == 16
    assert cmp.results.loc["CE marked", f"change {ids[1]}"] == \
        cmp.results.loc["CE marked", ids[1]] - cmp.results.loc["CE marked", ids[0]]
    # The CLI's diff of the same runs reports the same fields and the same CE change.
    done = run_cli("runs", "diff", str(ids[0]), str(ids[1]), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    assert sorted(r["field"] for r in cli["settings"]) == sorted(cmp.settings.index)
    ce = next(r for r in cli["results"] if r["metric"] == "CE marked")
    assert ce["change"] == cmp.results.loc["CE marked", f"change {ids[1]}"]
    with pytest.raises(ValueError):
        store.compare(ids[:1])


def test_a_lab_closes_its_store_and_opens_it_again_for_the_next_run(db, small_incast):
    # A with block closes the connection (a notebook that ends its lab leaves no handle on
    # the file); the same lab runs again afterwards, on a store it opens anew.
    with rocelab.twin(db=db) as lab:
        first = lab.run(small_incast)
        assert not lab.store.closed
    assert lab._store is None
    lab.close()  # idempotent
    second = lab.run(small_incast)
    lab.close()
    with rocelab.open_store(db) as store:
        assert sorted(store.runs()["id"]) == sorted(first.ids + second.ids)
