"""Tuning from Python on a real Slurm (scripts/slurm-local: one node, Debian's slurmctld
and slurmd; root): ``lab.tune(..., executor="slurm", workers=2)`` submits one job array,
every trial names its Slurm job and node, the job's tasks end COMPLETED, and the objective
is the one the same trials give in threads here."""

import subprocess

import pytest

import rocelab
from conftest import EXAMPLES, SOURCE_DIR, is_root

pytestmark = pytest.mark.skipif(not is_root(), reason="starts Slurm's daemons: needs root")


@pytest.fixture(scope="module")
def slurm():
    was_up = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True).stdout.strip() == "idle"
    up = subprocess.run([str(SOURCE_DIR / "scripts" / "slurm-local"), "up"], capture_output=True, text=True)
    assert up.returncode == 0, up.stderr
    yield
    if not was_up:
        subprocess.run([str(SOURCE_DIR / "scripts" / "slurm-local"), "down"], capture_output=True, text=True)


def test_tune_on_two_slurm_workers_names_job_and_node_and_matches_threads(slurm, db, tmp_path):
    lab = rocelab.twin(db=db)
    result = lab.tune(EXAMPLES / "tune-incast.yaml", budget=6, method="random", progress=False, fresh_seeds=2,
                      executor="slurm", workers=2, slurm={"time": "00:10:00"}, work_dir=tmp_path / "sweep")
    ex = result.executor
    assert ex["kind"] == "slurm" and ex["failure"] == ""
    job = ex["slurm_job"]
    assert job and len(ex["slurm_tasks"]) == 2
    assert all(" COMPLETED" in t for t in ex["slurm_tasks"]), ex["slurm_tasks"]
    trials = result.trials
    assert len(trials) == 6 and trials["evaluated"].all()
    assert trials["worker.slurm_job"].str.startswith(job + "_").all()
    assert trials["worker.node"].str.len().gt(0).all()
    runs = rocelab.open_store(db).runs()
    trial_runs = runs[runs["tuning.role"].isna()]
    assert trial_runs["worker.slurm_job"].fillna("").str.startswith(job + "_").all()
    # Nothing of the job is left in the queue.
    queue = subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout.strip()
    assert queue == ""
    here = rocelab.twin(store=False).tune(EXAMPLES / "tune-incast.yaml", budget=6, method="random", progress=False,
                                           fresh_seeds=2)
    assert sorted(trials["objective"]) == pytest.approx(sorted(here.trials["objective"]))


def test_a_job_sbatch_refuses_is_an_error_with_its_message(slurm, tmp_path):
    with pytest.raises(rocelab.RocelabError, match="partition"):
        rocelab.twin(store=False).tune(EXAMPLES / "tune-incast.yaml", budget=2, progress=False, executor="slurm",
                                       workers=2, slurm={"partition": "no-such-partition"},
                                       work_dir=tmp_path / "sweep")
