"""The virtual lab from Python (root): virtual_lab() brings a lab up for the with block,
runs a spec on it with the soft switch and soft NICs, stores the run, and takes the lab
down afterwards, also when the block raises."""

import os
import subprocess

import pytest

import rocelab
from conftest import EXAMPLES, is_root, run_cli

pytestmark = pytest.mark.skipif(not is_root(), reason="the virtual lab needs root")


def lab_exists(name):
    return os.path.exists(f"/run/rocelab/{name}/lab.json") or \
        f"rlab-{name}-h1" in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_virtual_lab_runs_a_spec_and_goes_down(db):
    name = f"rlp{os.getpid() % 10000}"
    spec = rocelab.load_spec(EXAMPLES / "virtual-incast-8to1.yaml",
                             {"topology.hosts": 5, "workload.incast.senders": 4, "workload.incast.flow_bytes": "128KiB",
                              "workload.incast.rounds": 1})
    with rocelab.virtual_lab(hosts=5, link_gbps=0.5, buffer_kb=8192, name=name, db=db) as vlab:
        assert lab_exists(name)
        run = vlab.run(spec)
    assert not lab_exists(name)
    assert run.backend == "virtual" and run.status == "completed"
    f = run.flows
    assert len(f) == 4 and f["completed"].all()
    assert (f["bytes"] == 128 * 1024).all()
    assert len(run.counters) > 0  # NIC, switch and capture counters
    runs = rocelab.open_store(db).runs()
    assert runs["backend"].tolist() == ["virtual"] and runs["status"].tolist() == ["completed"]


def test_lab_goes_down_when_the_block_raises(db):
    name = f"rlp{os.getpid() % 10000 + 10000}"
    with pytest.raises(RuntimeError, match="boom"):
        with rocelab.virtual_lab(hosts=2, link_gbps=0.5, name=name, db=db):
            assert lab_exists(name)
            raise RuntimeError("boom")
    assert not lab_exists(name)
    run_cli("lab", "down", "--name", name)  # idempotent cleanup should the assertion fail


CHILD = """
import json, sys
import rocelab
name, db, spec_path = sys.argv[1], sys.argv[2], sys.argv[3]
# 4 x 64 MiB at 0.5 Gb/s: over two seconds of wire time each, far longer than the test waits.
spec = rocelab.load_spec(spec_path, {"topology.hosts": 5, "workload.incast.senders": 4,
                                     "workload.incast.flow_bytes": "64MiB", "workload.incast.rounds": 1})
with rocelab.virtual_lab(hosts=5, link_gbps=0.5, buffer_kb=8192, name=name, db=db) as vlab:
    print("up", flush=True)
    try:
        vlab.run(spec)
        print(json.dumps({"outcome": "completed"}), flush=True)
    except rocelab.Interrupted as e:
        f = e.run.flows
        print(json.dumps({"outcome": "interrupted", "keyboard": isinstance(e, KeyboardInterrupt),
                          "status": e.run.status, "flows": len(f), "completed": int(f["completed"].sum())}),
              flush=True)
        sys.exit(130)
"""


def test_ctrl_c_stops_a_virtual_run_stores_it_as_interrupted_and_takes_the_lab_down(db):
    import json
    import signal
    import sys
    import time
    name = f"rlp{os.getpid() % 10000 + 20000}"
    child = subprocess.Popen([sys.executable, "-c", CHILD, name, db, str(EXAMPLES / "virtual-incast-8to1.yaml")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "up"
        time.sleep(4.0)  # the NICs start and the incast is under way
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        run_cli("lab", "down", "--name", name)
    assert child.returncode == 130, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["outcome"] == "interrupted" and result["keyboard"]
    assert result["status"] == "interrupted"
    # What ran is kept: the 4 flows posted, not all of them finished.
    assert result["flows"] == 4 and result["completed"] < 4
    runs = rocelab.open_store(db).runs()
    assert runs["status"].tolist() == ["interrupted"]
    assert not lab_exists(name)
