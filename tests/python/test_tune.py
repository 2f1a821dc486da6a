"""Tuning from Python: the sweep, the per-trial callback, the store, resuming."""

import math

import pytest

import rocelab
from conftest import EXAMPLES, run_cli



def _check_the_rule(result):
    """The answer follows the rule: the contender only when it beat both baselines on the
    fresh seeds beyond the paired CI, else the baseline the decision names."""
    d = result.decision
    assert d["answer"] in {"tuned", "pfc_only", "vendor_default"}
    if d["answer"] == "tuned":
        assert all(v["outcome"] == "better" for v in d["versus"].values())
        assert result.best["baseline"] is None and result.best["index"] == d["contender"]["trial"]
    else:
        assert result.best["baseline"] == d["answer"] and result.best["index"] is None
    # The answer in one sentence: the verdict's first line, as `rocelab tune` prints it.
    assert result.answer == d["text"].splitlines()[0] and "\n" not in result.answer


def test_tune_from_the_spec_file_with_callback_and_store(lab, db, capsys):
    seen = []
    result = lab.tune(EXAMPLES / "tune-incast.yaml", budget=8, callback=seen.append, progress=True)
    # 8 trials, and 4 more when the best of the 8 lay at a range's edge (docs/tuning.md, "Edges").
    n = result.settings["budget"]
    assert n == 8 or (n == 12 and result.settings["widened"])
    assert [t["index"] for t in seen] == list(range(n))
    # Every trial pools its 3 common seeds (tuning.seeds): 16 incast flows each.
    assert result.settings["seeds"] == 3
    assert all(t["metrics"]["by_kind"]["incast"]["flows"] == 16 * 3 for t in seen if t["evaluated"])
    trials = result.trials
    assert len(trials) == n
    assert {"switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes", "switch.ecn.pmax", "objective"} <= set(trials.columns)
    _check_the_rule(result)
    # stderr is captured, not a terminal: the progress bar stays silent.
    assert "\r" not in capsys.readouterr().err
    # A trial prints as one short line; its metrics are there to read, not in the print.
    line = str(seen[0])
    assert line.startswith("trial 0: ") and "\n" not in line and "by_kind" not in line
    assert "metrics_json" not in seen[0]
    # Every trial's run and the trial itself are in the store, beside the baselines' runs.
    store = rocelab.open_store(db)
    runs = store.runs()
    assert (runs["sweep"] == result.sweep_id).all()
    roles = runs["tuning.role"]
    assert (roles.isna()).sum() == n  # one run per trial, a repeat per common seed
    assert set(roles.dropna()) >= {"baseline pfc_only", "baseline vendor_default", "confirm pfc_only"}
    stored = store._store.trials(result.sweep_id)
    assert sorted(t["index"] for t in stored) == list(range(n))
    # The winner as overrides re-runs to the same objective's ingredients.
    if result.best["index"] is not None:
        # The trial's run holds its 3 common seeds as repeats: the same 3 repeats again.
        again = lab.run(EXAMPLES / "tune-incast.yaml", overrides={**result.best_overrides, "repeats": 3})
        best_run = store.load(int(trials.loc[trials["index"] == result.best["index"], "run_id"].iloc[0]))
        assert again.summary()["slowdown"] == best_run.summary()["slowdown"]


def test_tune_answers_with_baselines_an_interval_and_the_pareto_front(lab):
    result = lab.tune(EXAMPLES / "tune-incast.yaml", budget=4, method="random", progress=False, fresh_seeds=3)
    assert set(result.baselines) == {"pfc_only", "vendor_default"}
    for b in result.baselines.values():
        assert {"params", "summary", "objective"} <= set(b)
        assert b["summary"]["by_kind"]["incast"]["flows"] == 16 * 3  # pooled over the 3 common seeds
    assert result.baselines["pfc_only"]["params"]["switch.ecn.enabled"] is False
    best = result.best
    _check_the_rule(result)
    # The best as a dict all the way down: the summary parsed, no JSON text left.
    assert "metrics_json" not in best and isinstance(best["summary"], dict)
    if best["index"] is not None:
        assert best["metrics"]["by_kind"]["incast"]["flows"] == 16 * 3
    assert result.trials is result.trials  # made once
    ci = best["ci"]
    assert ci["n"] == 3 and ci["level"] == 0.95 and ci["low"] <= ci["mean"] <= ci["high"]
    assert len(best["fresh"]["objectives"]) == 3
    assert isinstance(best["at_edge"], list)
    if best["baseline"] is not None:
        assert best["index"] is None and set(result.best_overrides) == set(best["params"])
    front = result.pareto
    assert len(front) >= 1
    assert {"label", "trial", "paused_us"} <= set(front.columns)
    # No point of the front is dominated by any trial or baseline.
    x = result.answer_data["pareto_axes"]["x"]
    points = result.answer_data["pareto_points"]
    for _, f in front.iterrows():
        assert not any(p[x] <= f[x] and p["paused_us"] <= f["paused_us"] and
                       (p[x] < f[x] or p["paused_us"] < f["paused_us"]) for p in points)
    import matplotlib
    matplotlib.use("Agg")
    assert result.plot_pareto().get_xlabel() == x


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


def test_tune_on_local_workers_names_where_each_trial_ran_and_resumes(lab, db):
    first = lab.tune(EXAMPLES / "tune-incast.yaml", budget=4, method="random", progress=False, fresh_seeds=2,
                     executor="local", workers=2)
    assert first.executor["kind"] == "local" and first.executor["workers"] == 2
    assert first.executor["failure"] == "" and "slurm_job" not in first.executor
    trials = first.trials
    assert len(trials) == 4 and trials["evaluated"].all()
    # Two worker processes shared the trials; each trial names the one that ran it.
    assert trials["worker.name"].notna().all() and trials["worker.node"].notna().all()
    assert (trials["worker.attempts"] == "1").all()
    store = rocelab.open_store(db)
    runs = store.runs()
    trial_runs = runs[runs["tuning.role"].isna()]
    assert len(trial_runs) == 4  # one run per trial, a repeat per common seed
    assert trial_runs["worker.name"].notna().all()
    # The same sweep again, on the same store with new workers: it resumes, never repeats.
    second = lab.tune(EXAMPLES / "tune-incast.yaml", budget=6, method="random", progress=False, fresh_seeds=2,
                      executor="local", workers=2)
    assert second.sweep_id == first.sweep_id
    n = second.settings["budget"]  # 6, or more when its first 6 trials' best lay at an edge
    assert n >= 6 and sorted(second.trials["index"]) == list(range(n))
    stored = store._store.trials(second.sweep_id)
    assert sorted(t["index"] for t in stored) == list(range(n))
    # The same objective as trials run in threads here (the twin is deterministic per seed).
    here = rocelab.twin(store=False).tune(EXAMPLES / "tune-incast.yaml", budget=4, method="random",
                                           progress=False, fresh_seeds=2)
    assert list(here.trials["objective"]) == pytest.approx(list(first.trials.sort_values("index")["objective"]))


def test_tune_executor_arguments_are_checked(lab, monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="expected 'local' or 'slurm'"):
        lab.tune(EXAMPLES / "tune-incast.yaml", budget=2, executor="cluster")
    with pytest.raises(ValueError, match="need executor="):
        lab.tune(EXAMPLES / "tune-incast.yaml", budget=2, workers=4)
    with pytest.raises(ValueError, match="slurm= options need executor='slurm'"):
        lab.tune(EXAMPLES / "tune-incast.yaml", budget=2, executor="local", slurm={"partition": "debug"})
    with pytest.raises(ValueError, match="at least 1"):
        lab.tune(EXAMPLES / "tune-incast.yaml", budget=2, executor="local", workers=0)
    # No Slurm on PATH: said so, before any trial.
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(rocelab.RocelabError, match="sbatch"):
        lab.tune(EXAMPLES / "tune-incast.yaml", budget=2, executor="slurm", workers=2, progress=False,
                 work_dir=tmp_path / "w")


def test_the_answer_is_the_sentence_the_cli_prints(lab, tmp_path):
    args = dict(budget=3, method="random", fresh_seeds=2)
    result = lab.tune(EXAMPLES / "tune-incast.yaml", progress=False, **args)
    done = run_cli("tune", str(EXAMPLES / "tune-incast.yaml"), "--budget", "3", "--method", "random",
                   "--fresh-seeds", "2", "--quiet", "--db", str(tmp_path / "cli.db"), "--export-dir",
                   str(tmp_path / "exports"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer_lines = [line[len("answer      "):] for line in done.stdout.splitlines() if line.startswith("answer ")]
    assert answer_lines and answer_lines[0] == result.answer
    assert answer_lines == result.decision["text"].splitlines()
