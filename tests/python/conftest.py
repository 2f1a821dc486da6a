"""Fixtures for the rocelab Python tests (ctest runs them with PYTHONPATH=build/python)."""

import os
import pathlib
import subprocess

import matplotlib
import pytest

matplotlib.use("Agg")

import rocelab  # noqa: E402
from rocelab.lab import rocelab_binary  # noqa: E402

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = SOURCE_DIR / "examples"


def pytest_configure(config):
    config.addinivalue_line("markers", "lab: needs root (network namespaces); skipped otherwise")


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "runs.db")


@pytest.fixture
def lab(db):
    return rocelab.twin(db=db)


@pytest.fixture
def small_incast():
    """A 4-to-1 incast at 100 Gb/s: a few hundred microseconds of virtual time."""
    return rocelab.Experiment(rocelab.Topology(hosts=5), rocelab.Incast(senders=4, flow_bytes="64KiB"),
                              name="small-incast")


def run_cli(*args, cwd=None):
    return subprocess.run([rocelab_binary(), *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def is_root():
    return os.geteuid() == 0
