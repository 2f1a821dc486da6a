"""The fabric decision report from Python: the same comparison as `rocelab compare`, its
data as DataFrames, its runs in the store, its report, and Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import rocelab
from conftest import EXAMPLES, run_cli



def test_compare_matches_the_cli_and_lands_in_the_store(db, tmp_path):
    seen = []
    cmp = rocelab.compare(EXAMPLES / "compare-fabrics.yaml", db=db, progress=False, callback=seen.append)
    fabrics = cmp.fabrics
    assert list(fabrics.index) == ["ib", "roce-tuned", "roce-default"]
    assert fabrics.loc["ib", "link"] == "infiniband" and fabrics.loc["roce-default", "link"] == "roce"
    # InfiniBand has no PFC: credit stalls, never drops.
    assert (fabrics["drops"] == 0).all()
    assert fabrics.loc["ib", "pauses.kind"] != fabrics.loc["roce-default", "pauses.kind"]
    for column in ("allreduce.busbw_gbps", "incast.fct_p99_ns", "small_messages.fct_p99_ns", "cost.per_gpu_usd",
                   "usd_per_busbw_gbps"):
        assert (fabrics[column] > 0).all(), column
    # Every line is a numbered step; the last is step n of n (compare_steps: 3 fabrics x 3
    # workloads, the example's 8 tuning trials, 2 scale points x 3 fabrics).
    assert [line.split(": ")[0] for line in seen] == [f"step {i} of 23" for i in range(1, 24)]
    assert any(line.split(": ", 1)[1].startswith("roce-tuned: trial") for line in seen)
    assert set(cmp.settings["roce-tuned"]) >= {"switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes", "switch.ecn.pmax"}

    # The example's scale sweep: 16 and 32 hosts, one row per fabric each.
    scale = cmp.scale
    assert sorted(scale["hosts"].unique()) == [16, 32]
    assert len(scale) == 6 and scale.groupby("hosts")["cheapest"].sum().tolist() == [1, 1]
    assert (scale["allreduce_bytes"] > 0).all()  # the sweep says the size its runs used
    assert isinstance(cmp.crossovers, list)

    # The same spec through the CLI gives the same figures: one comparison, two front ends.
    out = tmp_path / "cli"
    done = run_cli("compare", str(EXAMPLES / "compare-fabrics.yaml"), "--no-store", "--json", "--out", str(out))
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    for py_f, cli_f in zip(cmp.data["fabrics"], cli["fabrics"]):
        assert py_f["fabric"] == cli_f["fabric"]
        assert py_f["allreduce"] == cli_f["allreduce"] and py_f["incast"] == cli_f["incast"]
    assert cmp.data["scale"] == cli["scale"]

    # Every run of it is in the store, named compare/<fabric>/<scenario>.
    runs = rocelab.open_store(db).runs()
    ids = {i for f in cmp.data["fabrics"] for i in f["run_ids"]}
    assert ids and ids <= set(runs["id"])
    assert runs["name"].str.startswith("compare/").all()

    html = cmp.report()
    text = html.data if hasattr(html, "data") else html
    assert "<svg" in text and "roce-tuned" in text
    saved = cmp.save(tmp_path / "py")
    assert json.load(open(os.path.join(saved, "report.json")))["fabrics"][0]["fabric"] == "ib"


def test_keyword_settings_override_the_file(db):
    cmp = rocelab.compare(EXAMPLES / "compare-fabrics.yaml", fabrics=["ib", "roce-default"], scale_hosts=[],
                          small_message_bytes="32KiB", db=db, store=False, progress=False)
    assert list(cmp.fabrics.index) == ["ib", "roce-default"]
    assert cmp.scale.empty
    assert cmp.data["small_message_bytes"] == 32 * 1024


def test_errors_name_what_is_wrong(db):
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.compare(EXAMPLES / "compare-fabrics.yaml", fabrics=["no-such-fabric"], store=False, progress=False)
    assert "no-such-fabric" in str(e.value)
    with pytest.raises(rocelab.SpecError):
        rocelab.compare(EXAMPLES / "compare-fabrics.yaml", tune_method="annealing", store=False, progress=False)
    with pytest.raises(rocelab.SpecError):
        rocelab.compare(EXAMPLES / "compare-fabrics.yaml", small_message_bytes="lots", store=False, progress=False)


CHILD = textwrap.dedent("""
    import sys
    import rocelab
    print("started", flush=True)
    try:
        # A scale sweep far larger than the test waits for.
        rocelab.compare(sys.argv[1], fabrics=["ib", "roce-default"], scale_hosts=[64, 128, 256, 512, 1024, 2048],
                        db=sys.argv[2], progress=False)
        print("completed", flush=True)
    except rocelab.Interrupted as e:
        print("interrupted", isinstance(e, KeyboardInterrupt), flush=True)
        sys.exit(130)
""")


def test_sigint_stops_a_comparison_promptly(tmp_path):
    db = str(tmp_path / "cmp.db")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(EXAMPLES / "compare-fabrics.yaml"), db],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        time.sleep(2.0)  # into the scale sweep
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    assert out.strip() == "interrupted True"
    # What finished before the signal stays in the store, each run completed; the sweep's
    # remaining points (minutes of work: 2 fabrics x 6 sizes, 3 seeds each) were not run.
    runs = rocelab.open_store(db).runs()
    assert len(runs) > 0 and (runs["status"] == "completed").all()
    assert (runs["name"].str.endswith("/allreduce")).sum() < 3 * (2 + 2 * 6)
