"""A run's records as pandas DataFrames, its summary and its plots.

The frames are built from numpy arrays the C++ core fills column by column
(``_rocelab.Records.*_columns``): no Python object per record, so a million flows
convert in milliseconds (bench/python/). Names (hosts, devices, kinds, sources, counter
names) are pandas Categoricals over the run's name tables.

Every frame leads with the repeat a row belongs to and that repeat's seed: for a run
loaded from the store (one records object holding all its repeats), each record's own
repeat, with seed + repeat; for a run just made (a list of repeats), the list position.

Frames and their dtypes:

- ``flows``: repeat (uint32), seed (uint64), src, dst (uint32 host indexes), src_host,
  dst_host (category), qp (uint32), priority (uint8), kind (category: incast, allreduce,
  background, other), bytes (uint64), start_ns, end_ns, fct_ns, ideal_fct_ns (int64; -1
  when not completed), slowdown (float64; NaN when not completed), completed (bool),
  retransmits, ce_marked, cnps, tag (uint64), retransmits_measured, cnps_measured (bool).
  A flow whose backend did not count its retransmits or CNPs (a real RDMA NIC keeps no
  per-QP count) has the flag False and the count 0, which then means "not measured",
  never "none": select ``flows[flows.retransmits_measured]`` before summing, as the
  reports do (they leave such flows out and say "not measured"). ``totals`` has None for
  a count nothing in the run measured.
- ``pauses``: repeat, seed, device (category), port (uint32), priority (uint8), start_ns,
  end_ns, duration_ns (int64), source (category: capture, counter, model).
- ``events``: congestion events (CE marks, CNPs, retransmissions, drops) where the
  backend records them one by one: repeat, seed, kind (category), device (category),
  port, priority, t_ns, src, dst, qp, source. ``marks`` is its ce_mark rows. The twin
  counts marks per flow (flows.ce_marked) and per port (counters "ecn_marked") instead.
- ``queues``: repeat, seed, device (category), port, queue (uint8), t_ns, bytes.
- ``counters``: repeat, seed, device (category), port, name (category), t_ns, value.
- ``allreduce``: repeat, seed, algorithm, ranks, bytes, time_ns, algbw_gbps, busbw_gbps.
"""

import functools
import json
import os

import numpy as np
import pandas as pd

from . import _rocelab
from ._html_report import html_object
from .errors import RocelabError, UnavailableError

__all__ = ["Run"]

_KINDS = list(_rocelab.workload_kinds)
_SOURCES = list(_rocelab.pause_sources)
_EVENTS = list(_rocelab.event_kinds)


def _categorical(codes, names):
    codes = np.asarray(codes).astype(np.int32, copy=False)
    if len(set(names)) == len(names):
        return pd.Categorical.from_codes(codes, categories=list(names))
    return pd.Categorical(np.asarray(names, dtype=object)[codes])  # repeated names: by value


def _frame(columns, repeat, seed, categories):
    """One records object's frame, led by repeat and seed. ``repeat`` None: each record's
    own (a stored run's records hold all its repeats; repeat i ran seed + i), else the
    position of these records in the run's list of repeats, all of them with ``seed``."""
    n = len(next(iter(columns.values()))) if columns else 0
    if repeat is None:
        own = np.asarray(columns.get("repeat", np.zeros(n, dtype=np.uint32)), dtype=np.uint32)
        data = {"repeat": own, "seed": own.astype(np.uint64) + np.uint64(seed)}
    else:
        data = {"repeat": np.full(n, repeat, dtype=np.uint32), "seed": np.full(n, seed, dtype=np.uint64)}
    for name, values in columns.items():
        if name.startswith("_") or name == "repeat":
            continue
        if name in categories:
            data[name] = _categorical(values, categories[name])
        else:
            data[name] = values
    return pd.DataFrame(data, copy=False)


def _concat(frames):
    if len(frames) == 1:
        return frames[0]
    # Categories differ between repeats only when name tables do; union them so the
    # dtype stays categorical.
    from pandas.api.types import union_categoricals
    out = {}
    for col in frames[0].columns:
        parts = [f[col] for f in frames]
        if isinstance(parts[0].dtype, pd.CategoricalDtype):
            out[col] = union_categoricals([p.values for p in parts])
        else:
            out[col] = np.concatenate([p.to_numpy() for p in parts])
    return pd.DataFrame(out, copy=False)


class Run:
    """One experiment's results: one ``Records`` per repeat, plus where they are stored.

    ``status`` is completed, partial (a repeat completed fewer flows than it has, or lost a
    host: the store's rule, ``rocelab._rocelab.run_ending``), interrupted, failed (or running
    as the store says);
    ``ids`` the run store ids of the repeats (empty when not stored)."""

    def __init__(self, repeats, seeds, name="", backend="", spec_yaml="", status="completed", ids=(),
                 store_path=None, summary_json=None):
        self.records = list(repeats)
        self.seeds = [int(s) for s in seeds]
        self.name = name
        self.backend = backend
        self.spec_yaml = spec_yaml
        self.status = status
        self.ids = list(ids)
        self.store_path = store_path
        self._summary_json = summary_json

    @classmethod
    def load(cls, store, run_id):
        """A stored run (all its repeats) by id; ``store`` is a path (opened read-only for this
        call) or an open :class:`rocelab.Store` (then the same as ``store.load(run_id)``)."""
        if isinstance(store, (str, os.PathLike)):
            handle = _rocelab.Store(os.fspath(store), True)
            try:
                return cls.from_store(handle, run_id)
            finally:
                handle.close()
        return store.load(run_id)

    @classmethod
    def from_store(cls, handle, run_id):
        """A stored run (all its repeats, each record with its own) read through ``handle``,
        a ``rocelab._rocelab.Store``."""
        info = handle.run(int(run_id))
        records = handle.load(int(run_id))
        return cls([records], [info["seed"]], name=info["name"], backend=info["backend"],
                   spec_yaml=info["spec_yaml"], status=info["status"], ids=[info["id"]], store_path=handle.path)

    def __repr__(self):
        ids = f", ids={self.ids}" if self.ids else ""
        return (f"<rocelab.Run {self.name or '(unnamed)'} backend={self.backend} status={self.status} "
                f"repeats={len(self.records)} flows={sum(len(r) for r in self.records)}{ids}>")

    # --- frames -----------------------------------------------------------------------

    def _repeat_of(self, i):
        """How a frame numbers the records at position i: by each record's own repeat when
        one records object holds the run (a stored run of any number of repeats), by i
        when the run is a list of repeats."""
        return None if len(self.records) == 1 else i

    def _frames(self, method, categories_of):
        frames = []
        for i, (records, seed) in enumerate(zip(self.records, self.seeds)):
            columns = getattr(records, method)()
            frames.append(_frame(columns, self._repeat_of(i), seed, categories_of(records, columns)))
        if not frames:
            frames.append(_frame(getattr(_rocelab.synthetic_flows(0), method)(), 0, 0,
                                 categories_of(_rocelab.synthetic_flows(0), {})))
        return _concat(frames)

    @functools.cached_property
    def flows(self):
        df = self._frames("flows_columns", lambda r, c: {"kind": _KINDS})
        # Host names beside the indexes.
        names = [r.hosts for r in self.records] or [[]]
        if all(n == names[0] for n in names) and len(df):
            hosts = names[0]
            df.insert(4, "src_host", _categorical(df["src"].to_numpy(), hosts))
            df.insert(5, "dst_host", _categorical(df["dst"].to_numpy(), hosts))
        elif len(df):
            df.insert(4, "src_host", pd.Categorical([names[r][i] for r, i in zip(df["repeat"], df["src"])]))
            df.insert(5, "dst_host", pd.Categorical([names[r][i] for r, i in zip(df["repeat"], df["dst"])]))
        else:
            df.insert(4, "src_host", pd.Categorical([]))
            df.insert(5, "dst_host", pd.Categorical([]))
        return df

    @functools.cached_property
    def pauses(self):
        return self._frames("pauses_columns", lambda r, c: {"device": r.devices, "source": _SOURCES})

    @functools.cached_property
    def events(self):
        return self._frames("events_columns", lambda r, c: {"kind": _EVENTS, "device": r.devices, "source": _SOURCES})

    @property
    def marks(self):
        e = self.events
        return e[e["kind"] == "ce_mark"].reset_index(drop=True)

    @property
    def cnps(self):
        e = self.events
        return e[e["kind"] == "cnp"].reset_index(drop=True)

    @functools.cached_property
    def queues(self):
        return self._frames("queues_columns", lambda r, c: {"device": r.devices})

    @functools.cached_property
    def counters(self):
        return self._frames("counters_columns",
                            lambda r, c: {"device": r.devices, "name": c.get("_names", [])})

    @functools.cached_property
    def allreduce(self):
        frames = []
        for i, (records, seed) in enumerate(zip(self.records, self.seeds)):
            c = records.allreduce_columns()
            lead = _frame({"repeat": c["repeat"]}, self._repeat_of(i), seed, {})
            frames.append(pd.DataFrame({"repeat": lead["repeat"].to_numpy(), "seed": lead["seed"].to_numpy(),
                                        "algorithm": pd.Categorical(c["algorithm"]),
                                        **{k: v for k, v in c.items() if k not in ("algorithm", "repeat")}}))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    @property
    def totals(self):
        """Backend totals (PFC frames, paused time, CE marks, CNPs, drops, ...) summed over
        repeats. retransmits and cnps are None when a repeat did not measure them (the sum
        of a count nobody took is unknown, not 0)."""
        out = {}
        for r in self.records:
            for k, v in r.totals.items():
                if k in out and out[k] is None:
                    continue
                out[k] = None if v is None else out.get(k, 0) + v
        return out

    # --- summary ----------------------------------------------------------------------

    def summary(self):
        """The summary ``rocelab run --json`` prints (nearest-rank percentiles, nccl-tests
        bandwidths), pooled over the repeats, as a dict."""
        if self._summary_json is None:
            run_id = ",".join(str(i) for i in self.ids)
            self._summary_json = _rocelab.summary_json(self.records, self.seeds, run_id, self.backend, self.name)
        return json.loads(self._summary_json)

    # --- plots ------------------------------------------------------------------------

    def plot_fct_cdf(self, ax=None, by="kind", slowdown=False, label=None, logx=True):
        """Empirical CDF of flow completion time (or slowdown) of completed flows, one
        line per ``by`` group (None: one line). Returns the matplotlib Axes."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        df = self.flows[self.flows["completed"]]
        col = "slowdown" if slowdown else "fct_ns"
        groups = [(label or self.name or "all", df)] if by is None else \
            [(f"{label + ' ' if label else ''}{k}", g) for k, g in df.groupby(by, observed=True)]
        for name, g in groups:
            values = np.sort(g[col].to_numpy(dtype=np.float64))
            if not slowdown:
                values = values / 1e3
            if len(values) == 0:
                continue
            ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post", label=str(name))
        ax.set_xlabel("slowdown (FCT / ideal)" if slowdown else "flow completion time (us)")
        ax.set_ylabel("fraction of flows")
        if logx:
            ax.set_xscale("log")
        ax.set_ylim(0, 1.01)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right")
        return ax

    def plot_pauses(self, ax=None, repeat=0):
        """Pause timeline: one row per (device, port, priority) that was paused, a bar per
        interval. Returns the matplotlib Axes."""
        import matplotlib.pyplot as plt
        p = self.pauses[self.pauses["repeat"] == repeat]
        rows = p.groupby(["device", "port", "priority"], observed=True).size().index.tolist()
        if ax is None:
            _, ax = plt.subplots(figsize=(8, max(2.0, 0.3 * len(rows) + 1)))
        for y, (device, port, priority) in enumerate(rows):
            g = p[(p["device"] == device) & (p["port"] == port) & (p["priority"] == priority)]
            spans = list(zip(g["start_ns"].to_numpy() / 1e3, g["duration_ns"].to_numpy() / 1e3))
            ax.broken_barh(spans, (y - 0.4, 0.8), color="tab:red")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([f"{d} port {po} prio {pr}" for d, po, pr in rows])
        ax.set_xlabel("time (us)")
        ax.set_title(f"PFC pauses ({len(p)} intervals)" if len(rows) else "no PFC pauses")
        ax.grid(True, axis="x", alpha=0.3)
        return ax

    # --- report -----------------------------------------------------------------------

    @functools.cached_property
    def html(self):
        """The HTML report of the run's first repeat (experiments/report/report.hpp, the page
        ``rocelab report`` writes), as text; made once."""
        if not hasattr(_rocelab, "report_html"):
            raise UnavailableError("this build of rocelab has no HTML report")
        if not self.records:
            raise RocelabError(f"run {self.name or '(unnamed)'} has no records here to report "
                               "(a controller's run without its store: connect(..., db=))")
        return _rocelab.report_html(self.records[0], self.spec_yaml, self.seeds[0],
                                    str(self.ids[0]) if self.ids else "", self.name, self.backend, self.status)

    def report(self):
        """The report (:attr:`html`) as a notebook shows it: an ``IPython.display.HTML``
        when IPython is there, else the text. Returns it; displays nothing itself."""
        return html_object(self.html)

    def _repr_html_(self):
        """A notebook shows a Run as its report; None (the plain repr) when there is none."""
        try:
            return self.html
        except RocelabError:
            return None
