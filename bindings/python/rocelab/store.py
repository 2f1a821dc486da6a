"""Reading and writing the run store (SQLite, store/run_store.hpp) from Python.

The same database the CLI uses: ``rocelab.db`` in the working directory unless a path is
given. Readers open it read-only and may read while another process writes a run. A
:class:`Store` holds its database connection until :meth:`Store.close` (or the end of its
``with`` block)::

    with rocelab.open_store("rocelab.db") as store:
        runs = store.runs()            # one row per run: results and parameters as columns
        run = store.load(runs["id"].iloc[-1])
"""

import os

import pandas as pd

from . import _rocelab
from .errors import RocelabError
from .run import Run

__all__ = ["open_store", "Store", "RunComparison", "DEFAULT_DB"]

DEFAULT_DB = "rocelab.db"

# The columns of runs() that describe the run itself, in order; a parameter of the same
# name (the spec's name, seed, backend) is the run's own column.
_RUN_COLUMNS = ["id", "name", "backend", "seed", "status", "error", "started", "ended", "sweep"]


class Store:
    """An open run store. ``runs()`` lists runs; ``run(id)`` / ``load(id)`` give a :class:`Run`.

    A context manager: the ``with`` block's end closes it, as :meth:`close` does. Every use
    of a closed store raises :class:`rocelab.StoreError`."""

    def __init__(self, path=DEFAULT_DB, read_only=False):
        self.path = os.fspath(path)
        self.read_only = read_only
        self._store = _rocelab.Store(self.path, read_only)

    def close(self):
        """Closes the database connection now (not when Python collects the object); a
        second close does nothing."""
        self._store.close()

    @property
    def closed(self):
        return self._store.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def runs(self, status=None, name=None, results=True, with_spec=False):
        """Every run as a DataFrame, oldest first; filtered by ``status``/``name`` when given.

        Columns: id, name, backend, seed, status, error, started, ended (UTC timestamps;
        NaT while running), sweep; then with ``results`` the run's key results as
        ``rocelab runs show`` names them, times in ns ("fct p99 ns", "slowdown p99",
        "incast fct p99 ns", "pause frames", "paused ns", "CE marked", "drops", ...; NaN
        where a run has none or did not measure it; each run's flows are read for them,
        ``results=False`` leaves them out); then one column per
        parameter the run was stored with (spec paths such as "switch.ecn.kmin_bytes"; a
        numeric field's values as numbers in its unit, bytes, ns or Gb/s, a boolean's as
        True/False; NaN/None where a run has no such parameter); with ``with_spec`` last
        the resolved spec's YAML ("spec_yaml"), which is left out otherwise."""
        rows = self._store.runs(with_spec=with_spec)
        if status is not None:
            rows = [r for r in rows if r["status"] == status]
        if name is not None:
            rows = [r for r in rows if r["name"] == name]
        df = pd.DataFrame(rows, columns=["id", "name", "backend", "seed", "status", "error", "started_unix_ns",
                                         "ended_unix_ns", "sweep"])
        df["started"] = pd.to_datetime(df["started_unix_ns"], unit="ns", utc=True)
        df["ended"] = pd.to_datetime(df["ended_unix_ns"].where(df["ended_unix_ns"] > 0), unit="ns", utc=True)
        df = df[_RUN_COLUMNS]
        parts = [df]
        if results:
            parts.append(pd.DataFrame([self._store.key_results(r["id"]) for r in rows], index=df.index))
        parameters = pd.DataFrame([{p: v for p, v in r["parameters"].items() if p not in _RUN_COLUMNS} for r in rows],
                                  index=df.index)
        types = {path: kind for path, kind, _, _ in _rocelab.fields()}
        parts.append(pd.DataFrame({p: _typed_parameter(parameters[p], types.get(p)) for p in parameters.columns},
                                  index=df.index))
        if with_spec:
            parts.append(pd.DataFrame({"spec_yaml": [r["spec_yaml"] for r in rows]}, index=df.index))
        return pd.concat(parts, axis=1)

    def info(self, run_id):
        """The store's row of a run as a dict (status, parameters, the resolved spec, ...)."""
        return self._store.run(int(run_id))

    def load(self, run_id):
        """A stored run as a :class:`rocelab.Run`."""
        return Run.from_store(self._store, run_id)

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
        specs = [_rocelab.Spec.parse(self.info(i)["spec_yaml"], f"run {i}") for i in ids]
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
        metrics = [self._store.key_results(i) for i in ids]
        names = [m for m in metrics[0] if all(m in other for other in metrics[1:])]
        results = pd.DataFrame({i: [m[n] for n in names] for i, m in zip(ids, metrics)}, index=names, dtype=float)
        results.index.name = "metric"
        base = results[ids[0]]
        for i in ids[1:]:
            results[f"change {i}"] = results[i] - base
            results[f"change% {i}"] = (100.0 * (results[i] - base) / base.abs()).where(base != 0)
        return RunComparison(ids, settings, results)

    def __repr__(self):
        state = " (closed)" if self.closed else " (read-only)" if self.read_only else ""
        return f"<rocelab.Store {self.path}{state}>"


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


_NUMBER_FIELDS = {"integer": "Int64", "size": "Int64", "duration": "Int64", "real": "float64", "rate_gbps": "float64"}


def _typed_parameter(column, field_type):
    """A parameter column (stored as text) as its spec field's values: numbers for numeric
    fields, in the field's unit (bytes, ns, Gb/s) through the spec's own parser
    (``_rocelab.field_number``), True/False for boolean fields; text for other fields,
    for parameters that are no spec field (tuning.role, worker.name) and for a column with
    a value its field does not parse."""
    present = column.dropna()
    try:
        if field_type in _NUMBER_FIELDS:
            values = {text: _rocelab.field_number(column.name, text) for text in present.unique()}
            return column.map(values).astype(_NUMBER_FIELDS[field_type])
        if field_type == "boolean" and set(present.unique()) <= {"true", "false"}:
            return column.map({"true": True, "false": False})
    except (RocelabError, TypeError, ValueError):
        pass
    return column


def open_store(path=DEFAULT_DB, read_only=True):
    """Opens a run store; read-only by default, so notebooks never lock out a writer. Use
    it in a ``with`` block, or call ``close()``, to close it when done."""
    if isinstance(path, Store):
        return path
    return Store(path, read_only=read_only)
