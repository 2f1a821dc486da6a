"""Ctrl-C during a long run: the run stops promptly, is stored as interrupted with what
it had, and Python gets rocelab.Interrupted (a KeyboardInterrupt)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import rocelab

CHILD = textwrap.dedent("""
    import json, sys
    import rocelab
    lab = rocelab.twin(db=sys.argv[1])
    # Seconds of wall time on the twin: WebSearch background at 80% load on 32 hosts.
    exp = rocelab.Experiment(rocelab.Topology(hosts=32),
                             rocelab.Background(cdf="websearch", load=0.8, duration_ns="500ms"),
                             rocelab.Twin(stop_ns="2s"), name="long", repeats=2)
    print("started", flush=True)
    try:
        lab.run(exp)
        print(json.dumps({"outcome": "completed"}), flush=True)
    except rocelab.Interrupted as e:
        f = e.run.flows
        print(json.dumps({"outcome": "interrupted", "ids": e.run.ids, "status": e.run.status,
                          "flows": len(f), "completed": int(f["completed"].sum()),
                          "keyboard": isinstance(e, KeyboardInterrupt)}), flush=True)
        sys.exit(130)
""")


def test_sigint_stops_a_long_run_and_marks_it_interrupted(tmp_path):
    db = str(tmp_path / "int.db")
    env = dict(os.environ)
    child = subprocess.Popen([sys.executable, "-c", CHILD, db], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "started"
        time.sleep(2.0)  # well into the first repeat
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
        stopped_after = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["outcome"] == "interrupted" and result["keyboard"]
    assert result["status"] == "interrupted"
    assert len(result["ids"]) == 1  # the second repeat never started
    # The twin polls signals every few milliseconds; a run left to finish would take far longer.
    assert stopped_after < 10, stopped_after
    # What ran is kept: flows posted so far, not all of them finished.
    assert result["flows"] > 0 and result["completed"] < result["flows"]

    store = rocelab.open_store(db)
    runs = store.runs()
    assert runs["status"].tolist() == ["interrupted"]
    assert "KeyboardInterrupt" in runs["error"].iloc[0]
    back = store.load(result["ids"][0])
    assert len(back.flows) == result["flows"]
    assert back.status == "interrupted"


def test_exception_from_a_signal_handler_is_raised_as_is(tmp_path):
    code = textwrap.dedent("""
        import signal, sys
        import rocelab
        class Deadline(Exception):
            pass
        def on_alarm(signum, frame):
            raise Deadline("too slow")
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        lab = rocelab.twin(db=sys.argv[1])
        exp = rocelab.Experiment(rocelab.Topology(hosts=32),
                                 rocelab.Background(cdf="websearch", load=0.8, duration_ns="500ms"),
                                 rocelab.Twin(stop_ns="2s"))
        try:
            lab.run(exp)
        except Deadline as e:
            st = rocelab.open_store(sys.argv[1]).runs()["status"].tolist()
            print("deadline", st)
            sys.exit(3)
    """)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.db")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stderr
    assert "deadline ['interrupted']" in done.stdout
