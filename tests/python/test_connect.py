"""rocelab.connect(): specs submitted to a running controller on loopback, which runs
them (the twin here) into its own store."""

import os
import socket
import subprocess
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
    runs = rocelab.open_store(db).runs()
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
    assert result.best["index"] == local.best["index"]

