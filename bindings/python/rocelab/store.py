"""Reading and writing the run store (SQLite, store/run_store.hpp) from Python.

The same database the CLI uses: ``rocelab.db`` in the working directory unless a path is
given. Readers open it read-only and may read while another process writes a run.
"""

import os

import pandas as pd

from . import _rocelab

__all__ = ["open_store", "Store", "DEFAULT_DB"]

DEFAULT_DB = "rocelab.db"


class Store:
    """An open run store. ``runs()`` lists runs; ``run(id)`` / ``load(id)`` give a :class:`Run`."""

    def __init__(self, path=DEFAULT_DB, read_only=False):
        self.path = os.fspath(path)
        self.read_only = read_only
        self._store = _rocelab.Store(self.path, read_only)

    def runs(self, status=None, name=None):
        """Every run as a DataFrame (id, name, backend, seed, status, error, started,
        ended, sweep, parameters), oldest first; filtered by ``status``/``name`` when given."""
        rows = self._store.runs()
        if status is not None:
            rows = [r for r in rows if r["status"] == status]
        if name is not None:
            rows = [r for r in rows if r["name"] == name]
        df = pd.DataFrame(rows, columns=["id", "name", "backend", "seed", "status", "error", "started_unix_ns",
                                         "ended_unix_ns", "sweep", "parameters", "spec_yaml"])
        df["started"] = pd.to_datetime(df["started_unix_ns"], unit="ns", utc=True)
        df["ended"] = pd.to_datetime(df["ended_unix_ns"].where(df["ended_unix_ns"] > 0), unit="ns", utc=True)
        return df.drop(columns=["started_unix_ns", "ended_unix_ns"])

    def info(self, run_id):
        """The store's row of a run as a dict (status, parameters, the resolved spec, ...)."""
        return self._store.run(int(run_id))

    def load(self, run_id):
        """A stored run as a :class:`rocelab.Run`."""
        from .run import Run
        return Run.load(self, run_id)

    run = load

    def latest(self, status=None):
        """The most recent run (with ``status`` when given)."""
        rows = self._store.runs()
        rows = [r for r in rows if status is None or r["status"] == status]
        if not rows:
            raise LookupError(f"no runs{' with status ' + status if status else ''} in {self.path}")
        return self.load(max(rows, key=lambda r: (r["started_unix_ns"], r["id"]))["id"])

    def __repr__(self):
        return f"<rocelab.Store {self.path}{' (read-only)' if self.read_only else ''}>"


def open_store(path=DEFAULT_DB, read_only=True):
    """Opens a run store; read-only by default, so notebooks never lock out a writer."""
    if isinstance(path, Store):
        return path
    return Store(path, read_only=read_only)
