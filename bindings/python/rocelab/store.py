"""Reading and writing the run store (SQLite, store/run_store.hpp) from Python.

The same database the CLI uses: ``rocelab.db`` in the working directory unless a path is
given. Readers open it read-only and may read while another process writes a run.
"""

import os

import pandas as pd

from . import _rocelab

__all__ = ["open_store", "Store", "RunComparison", "DEFAULT_DB"]

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

    def compare(self, run_ids):
        """Runs side by side, as ``rocelab runs diff`` shows two: the spec fields that differ
        and the key results with their change against the first run. Returns a
        :class:`RunComparison`."""
        ids = [int(i) for i in run_ids]
        if len(ids) < 2:
            raise ValueError("compare needs at least two run ids")
        runs = [self.load(i) for i in ids]
        specs = [_rocelab.Spec.parse(r.spec_yaml, f"run {i}") for r, i in zip(runs, ids)]
        rows = []
        for field in _rocelab.fields():
            path = field[0]
            values = []
            for spec in specs:
                try:
                    values.append(spec.get(path))
                except Exception:  # noqa: BLE001 - a field a spec does not carry shows as "-"
                    values.append("-")
            if len(set(values)) > 1:
                rows.append([path] + values)
        settings = pd.DataFrame(rows, columns=["field"] + ids).set_index("field")
        metrics = [_metrics(r.summary()) for r in runs]
        names = [m for m in metrics[0] if all(m in other for other in metrics[1:])]
        results = pd.DataFrame({i: [m[n] for n in names] for i, m in zip(ids, metrics)}, index=names)
        results.index.name = "metric"
        base = results[ids[0]]
        for i in ids[1:]:
            results[f"change {i}"] = results[i] - base
            results[f"change% {i}"] = (100.0 * (results[i] - base) / base.abs()).where(base != 0)
        return RunComparison(ids, settings, results)

    def __repr__(self):
        return f"<rocelab.Store {self.path}{' (read-only)' if self.read_only else ''}>"


class RunComparison:
    """Stored runs side by side: ``settings`` (a row per spec field that differs, a column
    per run) and ``results`` (a row per metric, a column per run, then for each run after
    the first its change and change in percent against the first)."""

    def __init__(self, ids, settings, results):
        self.ids = ids
        self.settings = settings
        self.results = results

    def __repr__(self):
        return f"<rocelab.RunComparison runs={self.ids} differing_fields={len(self.settings)}>"


def _metrics(summary):
    """The key results of a summary (``rocelab run --json``), named as ``rocelab runs`` shows them."""
    out = {
        "flows": summary["flows"],
        "completed": summary["completed"],
        "fct p50 ns": summary["fct_ns"]["p50"],
        "fct p99 ns": summary["fct_ns"]["p99"],
        "fct max ns": summary["fct_ns"]["max"],
        "slowdown p50": summary["slowdown"]["p50"],
        "slowdown p99": summary["slowdown"]["p99"],
    }
    for kind, stats in sorted(summary.get("by_kind", {}).items()):
        out[f"{kind} fct p99 ns"] = stats["fct_ns"]["p99"]
        out[f"{kind} slowdown p99"] = stats["slowdown"]["p99"]
    out.update({
        "pause frames": summary["pfc"]["pause_frames"],
        "paused ns": summary["pfc"]["paused_ns"],
        "CE marked": summary["ecn"]["ce_marked"],
        "CNPs": summary["cnp"],
        "drops": summary["drops"],
        "retransmits": summary["retransmits"],
    })
    return {k: float(v) for k, v in out.items()}


def open_store(path=DEFAULT_DB, read_only=True):
    """Opens a run store; read-only by default, so notebooks never lock out a writer."""
    if isinstance(path, Store):
        return path
    return Store(path, read_only=read_only)
