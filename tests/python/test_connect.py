"""rocelab.connect(): specs submitted to a running controller on loopback, which runs
them (the twin here) into its own store."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import rocelab
from conftest import EXAMPLES
from rocelab.lab import rocelab_binary

pytestmark = pytest.mark.skipif(not getattr(rocelab._rocelab, "have_controller_client", False),
                                reason="built without the controller client")


@pytest.fixture
def controller(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = tmp_path / "token"
    token.write_text("python-test-token-0123456789abcdef\n")
    os.chmod(token, 0o600)
    db = tmp_path / "controller.db"
    proc = subprocess.Popen([rocelab_binary(), "controller", "--listen", f"127.0.0.1:{port}", "--db", str(db),
                             "--token-file", str(token)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=tmp_path)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.1)
    yield f"127.0.0.1:{port}", token, db
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_connect_runs_a_spec_through_the_controller(controller, small_incast):
    address, token, db = controller
    lab = rocelab.connect(address, token_file=token, db=db)
    run = lab.run(small_incast)
    assert run.status == "completed" and len(run.ids) == 1
    assert len(run.flows) == 4 and run.flows["completed"].all()
    assert run.summary()["flows"] == 4
    assert rocelab.open_store(db).runs()["status"].tolist() == ["completed"]


def test_connect_without_the_store_returns_the_summary(controller, small_incast):
    address, token, _ = controller
    run = rocelab.connect(address, token=token.read_text().strip()).run(small_incast)
    assert run.summary()["flows"] == 4 and len(run.flows) == 0


def test_wrong_token_is_refused(controller, small_incast):
    address, _, _ = controller
    with pytest.raises(rocelab.RocelabError):
        rocelab.connect(address, token="not-the-token", connect_timeout_s=3).run(small_incast)


def test_tuning_through_the_controller_runs_each_trial_there(controller, tmp_path):
    address, token, db = controller
    lab = rocelab.connect(address, token_file=token, db=db)
    seen = []
    result = lab.tune(EXAMPLES / "tune-incast.yaml", budget=4, method="random", progress=False, callback=seen.append)
    assert [t["index"] for t in seen] == [0, 1, 2, 3]
    assert all(t["evaluated"] for t in seen), [t["error"] for t in seen]
    # Every trial is a run in the controller's store, with the trial's thresholds.
    runs = rocelab.open_store(db).runs(with_spec=True)
    assert len(runs) == 4 and (runs["status"] == "completed").all()
    ids = [t["run_id"] for t in seen]
    assert sorted(ids) == sorted(runs["id"].tolist())
    for t in seen:
        stored = runs[runs["id"] == t["run_id"]].iloc[0]
        stored_spec = tmp_path / f"run{t['run_id']}.yaml"
        stored_spec.write_text(stored["spec_yaml"])
        ran = rocelab.load_spec(stored_spec)
        assert ran.get("switch.ecn.kmin_bytes") == rocelab.load_spec(EXAMPLES / "tune-incast.yaml", {
            "switch.ecn.kmin_bytes": t["applied"]["switch.ecn.kmin_bytes"]}).get("switch.ecn.kmin_bytes")
    # The same trials on the twin here score the same: the controller ran the same spec.
    local = rocelab.twin(store=False).tune(EXAMPLES / "tune-incast.yaml", budget=4, method="random", progress=False)
    assert result.trials["objective"].tolist() == pytest.approx(local.trials["objective"].tolist())
    # The same best trial (here the answer may be a baseline: the lab through the controller
    # runs no baselines, so its best is the best trial).
    assert result.trials["objective"].idxmin() == local.trials["objective"].idxmin()


def test_tuning_with_workers_attached_to_the_controller(controller, tmp_path):
    address, token, db = controller
    lab = rocelab.connect(address, token_file=token, db=db)
    for sweep in range(2):  # twice on the same controller: the first sweep's workers are gone
        result = lab.tune(EXAMPLES / "tune-incast.yaml", budget=4, method="random", progress=False, fresh_seeds=2,
                          executor="local", workers=2, work_dir=tmp_path / f"sweep{sweep}")
        assert result.executor["attached"] and result.executor["controller"] == address
        assert result.trials["evaluated"].all()
        runs = rocelab.open_store(db).runs()
        mine = runs[runs["id"].isin(result.trials["run_id"].tolist())]
        assert len(mine) == 4 and (mine["status"] == "completed").all()
        # The controller handed every trial to a worker and stored where it ran.
        assert mine["worker.name"].notna().all() and mine["worker.name"].astype(str).str.len().gt(0).all()
    assert len(rocelab.open_store(db).runs()) == 8
    local = rocelab.twin(store=False).tune(EXAMPLES / "tune-incast.yaml", budget=4, method="random", progress=False)
    assert result.trials["objective"].tolist() == pytest.approx(local.trials["objective"].tolist())
    # Workers read the token from a file: a lab connected with a bare token cannot lend them one.
    bare = rocelab.connect(address, token=token.read_text().strip())
    with pytest.raises(ValueError, match="token_file"):
        bare.tune(EXAMPLES / "tune-incast.yaml", budget=2, executor="local", workers=2)



# Far longer than any test waits: 16 x 1 GiB into one 100 Gb/s port on the twin.
LONG_SPEC = ("name: long-incast\nbackend: twin\nseed: 3\ntopology: {hosts: 17, link_gbps: 100}\n"
             "workload: {incast: {receiver: 0, senders: 16, flow_bytes: 1GiB}}\n")

CHILD = textwrap.dedent("""
    import sys
    import rocelab
    lab = rocelab.connect(sys.argv[1], token_file=sys.argv[2])
    print("started", flush=True)
    try:
        lab.run(sys.argv[3])
        print("completed", flush=True)
    except rocelab.Interrupted as e:
        print("interrupted", isinstance(e, KeyboardInterrupt), flush=True)
        sys.exit(130)
""")


def wait_for_status(db, wanted, limit_s=60):
    """The statuses of the store's runs once one of them is `wanted` (None on timeout)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if os.path.exists(db):
            statuses = rocelab.open_store(db).runs()["status"].tolist()
            if wanted in statuses:
                return statuses
        time.sleep(0.1)
    return None


def interrupt_when_running(proc, db):
    assert wait_for_status(db, "running") is not None, "the controller never started the run"
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=60)


def test_ctrl_c_during_a_submitted_run_interrupts_it_on_the_controller(controller, tmp_path):
    address, token, db = controller
    spec = tmp_path / "long.yaml"
    spec.write_text(LONG_SPEC)
    child = subprocess.Popen([sys.executable, "-c", CHILD, address, str(token), str(spec)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        out, err = interrupt_when_running(child, str(db))
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, (out, err)
    assert out.strip() == "interrupted True", (out, err)
    # The controller saw the connection close, stopped the run and kept what it had.
    assert wait_for_status(str(db), "interrupted") == ["interrupted"]
    run = rocelab.open_store(db).latest()
    assert len(run.flows) == 16 and not run.flows["completed"].any()


@pytest.mark.parametrize("remote", [True, False], ids=["--controller", "embedded"])
def test_ctrl_c_of_rocelab_run_stores_the_run_interrupted(controller, tmp_path, remote):
    address, token, controller_db = controller
    spec = tmp_path / "long.yaml"
    spec.write_text(LONG_SPEC)
    db = str(controller_db) if remote else str(tmp_path / "embedded.db")
    args = [rocelab_binary(), "run", str(spec)]
    args += ["--controller", address, "--token-file", str(token)] if remote else ["--db", db]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        out, err = interrupt_when_running(proc, db)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err, err
    assert wait_for_status(db, "interrupted") == ["interrupted"]


def test_a_cdf_file_a_spec_names_travels_inlined_to_the_controller(controller, tmp_path):
    """The controller opens no path a client names: Python reads the CDF on its own host."""
    address, token, db = controller
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    (client_dir / "mine.cdf").write_text("# two sizes\n1000 0.5\n4000 1\n")
    spec = client_dir / "spec.yaml"
    spec.write_text("name: inline-cdf\nbackend: twin\nseed: 1\ntopology: {hosts: 4, link_gbps: 100}\n"
                    "workload:\n  background:\n    cdf: mine.cdf\n    load: 0.2\n    duration_ns: 20us\n"
                    "twin: {stop_ns: 10ms}\n")
    lab = rocelab.connect(address, token_file=token, db=db)
    run = lab.run(spec)
    assert run.status == "completed"
    stored = rocelab.open_store(db).runs(with_spec=True).iloc[0]["spec_yaml"]
    assert "4000 1" in stored and "mine.cdf\n" not in stored.replace("# mine.cdf\n", "")
    # Tuning trials submitted through the controller carry the points too.
    tuning = client_dir / "tune.yaml"
    tuning.write_text((EXAMPLES / "tune-incast.yaml").read_text().replace("cdf: hadoop", "cdf: mine.cdf"))
    seen = []
    lab.tune(tuning, budget=1, method="random", progress=False, callback=seen.append)
    assert seen and all(t["evaluated"] for t in seen), [t["error"] for t in seen]
    for spec_yaml in rocelab.open_store(db).runs(with_spec=True)["spec_yaml"]:
        assert "4000 1" in spec_yaml
