"""One run layer and one sweep layer for every front end (experiments/run/run_session.hpp,
experiments/tuning/sweep_session.hpp): a sweep begun by ``rocelab tune`` is resumed by
``lab.tune`` on the same store and spec and the other way round (one sweep, each trial index
stored once, indexes contiguous); changed ranges are a new sweep; a 3-repeat ``rocelab run``
loads back with repeats 0, 1 and 2."""

import json

import rocelab
from conftest import run_cli

# The CLI tune tests' small incast (tests/cli/test_tune_command.cpp), a few trials' work.
SPEC = """name: tune-session
backend: twin
seed: 2
repeats: 1
topology: {type: single_switch, hosts: 5, link_gbps: 100}
switch:
  buffer_bytes: 512KiB
  pfc: {enabled: true, priorities: [3]}
  ecn: {enabled: true, queues: [3], kmin_bytes: 100KB, kmax_bytes: 400KB, pmax: 0.2}
nic: {mtu_bytes: 1024, data_priority: 3, dcqcn: {enabled: true}}
workload:
  incast: {receiver: 0, senders: 4, flow_bytes: 64KiB, start_jitter_ns: 2us}
twin: {stop_ns: 2s}
tuning:
  method: random
  budget: 3
  parallelism: 2
  seed: 3
  parameters:
    - {path: switch.ecn.kmin_bytes, min: 5KB, max: KMIN_MAX, log: true}
    - {path: switch.ecn.pmax, min: 0.01, max: 1, log: true}
  objective:
    - {metric: incast.slowdown_p99, weight: 1}
    - {metric: paused_us, weight: 0.01}
"""


def _spec(tmp_path, kmin_max="200KB", file="spec.yaml"):
    path = tmp_path / file
    path.write_text(SPEC.replace("KMIN_MAX", kmin_max))
    return path


def _cli_tune(spec, db, tmp_path, budget, *more):
    done = run_cli("tune", str(spec), "--db", db, "--budget", str(budget), "--fresh-seeds", "2", "--json", "--quiet",
                   "--export-dir", str(tmp_path / "exports"), "--force", *more, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _stored_indexes(db, sweep):
    with rocelab.open_store(db) as store:
        return sorted(t["index"] for t in store._store.trials(sweep)), [w["id"] for w in store._store.sweeps()]


def test_a_sweep_begun_by_rocelab_tune_is_resumed_by_lab_tune(lab, db, tmp_path):
    spec = _spec(tmp_path)
    first = _cli_tune(spec, db, tmp_path, 3)
    n = len(first["trials"])  # 3, or more when the best lay at a range's edge (docs/tuning.md, "Edges")
    calls = []
    second = lab.tune(spec, budget=n + 2, progress=False, fresh_seeds=2, callback=calls.append)
    assert second.sweep_id == first["sweep"]
    assert calls and min(t["index"] for t in calls) == n  # only new trials ran
    indexes, sweeps = _stored_indexes(db, first["sweep"])
    assert indexes == list(range(len(second.trials)))  # each index once, no gaps
    assert sweeps == [first["sweep"]]


def test_a_sweep_begun_by_lab_tune_is_resumed_by_rocelab_tune(lab, db, tmp_path):
    spec = _spec(tmp_path)
    first = lab.tune(spec, budget=3, progress=False, fresh_seeds=2)
    n = len(first.trials)
    second = _cli_tune(spec, db, tmp_path, n + 2)
    assert second["sweep"] == first.sweep_id
    assert second["resumed_trials"] == n
    indexes, sweeps = _stored_indexes(db, first.sweep_id)
    assert indexes == list(range(len(second["trials"])))
    assert sweeps == [first.sweep_id]


def test_a_sweep_whose_ranges_changed_is_a_new_sweep(lab, db, tmp_path):
    first = _cli_tune(_spec(tmp_path), db, tmp_path, 3)
    calls = []
    other = lab.tune(_spec(tmp_path, kmin_max="300KB", file="wider.yaml"), name="tune-session", budget=6,
                     progress=False, fresh_seeds=2, callback=calls.append)
    assert other.sweep_id != first["sweep"]
    assert min(t["index"] for t in calls) == 0
    _, sweeps = _stored_indexes(db, other.sweep_id)
    assert sorted(sweeps) == sorted([first["sweep"], other.sweep_id])


def test_sweep_settings_resolve_alike_for_both_front_ends(lab, db, tmp_path):
    # No name in the spec or its section: the file's stem names the sweep for both.
    spec = tmp_path / "stem-named.yaml"
    spec.write_text(SPEC.replace("KMIN_MAX", "200KB").replace("name: tune-session\n", ""))
    cli = _cli_tune(spec, db, tmp_path, 3)
    assert cli["name"] == "stem-named"
    py = lab.tune(spec, budget=len(cli["trials"]) + 1, progress=False, fresh_seeds=2)
    assert py.settings["name"] == "stem-named" and py.sweep_id == cli["sweep"]


def test_a_three_repeat_rocelab_run_loads_back_with_repeats_0_1_and_2(db, tmp_path):
    # One stored run; the store keeps each record's repeat (schema 4) and Run.load reads it.
    spec = tmp_path / "three.yaml"
    spec.write_text(SPEC.split("tuning:")[0].replace("repeats: 1", "repeats: 3"))
    done = run_cli("run", str(spec), "--db", db, "--json", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["store_run_id"]
    with rocelab.open_store(db) as store:
        assert store.runs()["id"].tolist() == [run_id]
        assert sorted(store.load(run_id).flows["repeat"].unique()) == [0, 1, 2]


def test_lab_tune_writes_the_exports_rocelab_tune_writes(lab, db, tmp_path):
    spec = _spec(tmp_path)
    result = lab.tune(spec, budget=3, progress=False, fresh_seeds=2, export_dir=tmp_path / "py")
    # The same sweep answered again by the CLI with the same budget: nothing left to run
    # (a widening is decided as it was), the same files.
    cli = _cli_tune(spec, db, tmp_path, 3, "--resume", str(result.sweep_id))
    assert cli["sweep"] == result.sweep_id and cli["resumed_trials"] == len(result.trials)
    assert set(result.exports) == set(cli["exports"])
    for name in ("best.yaml", "trials.csv", "tuning.html"):
        assert (tmp_path / "py" / name).exists() and (tmp_path / "exports" / name).exists()
    assert (tmp_path / "py" / "trials.csv").read_text() == (tmp_path / "exports" / "trials.csv").read_text()
