"""Tuning from Python: the sweep, the per-trial callback, the store, resuming."""

import math

import pytest

import rocelab
from conftest import EXAMPLES

pytestmark = pytest.mark.skipif(not rocelab._rocelab.have_tuning, reason="built without the tuning library")


def test_tune_from_the_spec_file_with_callback_and_store(lab, db, capsys):
    seen = []
    result = lab.tune(EXAMPLES / "tune-incast.yaml", budget=8, callback=seen.append, progress=True)
    assert [t["index"] for t in seen] == list(range(8))
    assert all(t["metrics"]["flows"] == 16 for t in seen if t["evaluated"])
    trials = result.trials
    assert len(trials) == 8
    assert {"switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes", "switch.ecn.pmax", "objective"} <= set(trials.columns)
    feasible = trials[trials["feasible"]]
    assert result.best["objective"] == pytest.approx(feasible["objective"].min())
    assert "8/8" in capsys.readouterr().err  # the progress bar reached the budget
    # Every trial's run and the trial itself are in the store.
    store = rocelab.open_store(db)
    runs = store.runs()
    assert len(runs) == 8 and (runs["sweep"] == result.sweep_id).all()
    stored = store._store.trials(result.sweep_id)
    assert sorted(t["index"] for t in stored) == list(range(8))
    # The winner as overrides re-runs to the same objective's ingredients.
    again = lab.run(EXAMPLES / "tune-incast.yaml", overrides=result.best_overrides)
    best_run = store.load(int(trials.loc[trials["index"] == result.best["index"], "run_id"].iloc[0]))
    assert again.summary()["slowdown"] == best_run.summary()["slowdown"]


def test_sweep_resumes_from_stored_trials(lab):
    first = lab.tune(EXAMPLES / "tune-incast.yaml", budget=4, method="random", progress=False)
    calls = []
    second = lab.tune(EXAMPLES / "tune-incast.yaml", budget=7, method="random", progress=False,
                      callback=calls.append)
    assert second.sweep_id == first.sweep_id
    assert [t["index"] for t in calls] == [4, 5, 6]  # only the new trials ran
    assert len(second.trials) == 7


def test_tune_with_python_parameters_and_bad_ones(lab):
    exp = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml", {"switch.buffer_bytes": "2MiB"})
    result = lab.tune(exp, parameters=[{"path": "switch.ecn.kmin_bytes", "min": "5KB", "max": "200KB", "log": True},
                                       {"path": "switch.ecn.pmax", "min": 0.01, "max": 1, "log": True}],
                      objective={"incast.slowdown_p99": 1}, constraints={"drops": {"max": 0}},
                      budget=4, method="grid", progress=False)  # a 2 x 2 grid
    assert len(result.trials) == 4 and not math.isnan(result.best["objective"])
    with pytest.raises(rocelab.SpecError):
        lab.tune(exp, parameters=[{"path": "switch.ecn.kmin_byts", "min": 1, "max": 2}],
                 objective={"incast.slowdown_p99": 1}, budget=2, progress=False)
