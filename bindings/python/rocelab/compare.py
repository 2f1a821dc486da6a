"""RoCE or InfiniBand: the fabric decision report from Python.

``rocelab.compare(spec, fabrics=[...])`` runs what ``rocelab compare`` runs
(experiments/compare/compare.hpp): the spec's all-reduce, incast and background workloads on the
twin once per fabric (InfiniBand with credits, RoCEv2 with thresholds tuned by rocelab
tune's search first, RoCEv2 as configured), the cost of each fabric from its profile's
price table, and optionally a scale sweep with the crossover points::

    cmp = rocelab.compare("examples/compare-fabrics.yaml", fabrics=["ib", "roce-tuned", "roce-default"])
    cmp.fabrics          # one row per fabric: busbw, FCTs, pauses or credit stalls, cost, ...
    cmp.scale            # one row per (hosts, fabric) of the scale sweep
    cmp.crossovers       # ["between 512 and 1024 hosts, ib becomes cheaper per ..."]
    cmp.report()         # the HTML page, inline in a notebook

Every run goes to the run store (``db=``, the CLI's ``rocelab.db`` by default) as
``compare/<fabric>/<scenario>``. The comparison runs with the GIL released; Ctrl-C stops it
at the next poll and raises :class:`rocelab.Interrupted` (the runs stored so far stay).
Settings not given come from the spec file's ``compare:`` section, then the defaults.
"""

import os

import pandas as pd

from . import _rocelab
from ._html_report import HtmlReport, run_reported
from ._installation import source_dir
from .spec import as_experiment
from .store import DEFAULT_DB, Store

__all__ = ["Comparison", "compare"]



class Comparison(HtmlReport):
    """A fabric comparison: ``fabrics``, ``scale`` and ``cost`` DataFrames, ``crossovers``,
    ``data`` (the report's JSON as a dict) and ``report()`` (its HTML page)."""

    @property
    def fabrics(self):
        """One row per fabric, indexed by the fabric's name. Grouped figures are flattened
        to dotted columns (``allreduce.busbw_gbps``, ``incast.fct_p99_ns``,
        ``pauses.paused_ns``, ``cost.per_gpu_usd``, ...); the tuned settings and run ids
        stay in ``data``."""
        rows = []
        for f in self.data.get("fabrics", []):
            row = {}
            for k, v in f.items():
                if isinstance(v, dict) and k != "settings":
                    row.update({f"{k}.{kk}": vv for kk, vv in v.items() if not isinstance(vv, (list, dict))})
                elif not isinstance(v, (list, dict)):
                    row[k] = v
            rows.append(row)
        df = pd.DataFrame(rows)
        return df.set_index("fabric") if "fabric" in df else df

    @property
    def settings(self):
        """Per fabric, the spec values it ran with (roce-tuned: the tuned thresholds)."""
        return {f["fabric"]: dict(f.get("settings", {})) for f in self.data.get("fabrics", [])}

    @property
    def cost(self):
        """The cost breakdown per fabric (NICs, switch ports, optics, per GPU)."""
        rows = [{"fabric": f["fabric"], **{k: v for k, v in f.get("cost", {}).items() if not isinstance(v, (list, dict))}}
                for f in self.data.get("fabrics", [])]
        df = pd.DataFrame(rows)
        return df.set_index("fabric") if "fabric" in df else df

    @property
    def scale(self):
        """The scale sweep, one row per (hosts, fabric): the all-reduce size its runs used,
        busbw, cost per GPU, USD per Gb/s."""
        rows = []
        for p in self.data.get("scale", []):
            for fabric, bw in p.get("busbw_gbps", {}).items():
                rows.append({"hosts": p["hosts"], "fabric": fabric, "allreduce_bytes": p.get("allreduce_bytes"),
                             "busbw_gbps": bw,
                             "cost_per_gpu_usd": p.get("cost_per_gpu_usd", {}).get(fabric),
                             "usd_per_busbw_gbps": p.get("usd_per_busbw_gbps", {}).get(fabric),
                             "cheapest": p.get("cheapest") == fabric})
        return pd.DataFrame(rows, columns=["hosts", "fabric", "allreduce_bytes", "busbw_gbps", "cost_per_gpu_usd",
                                           "usd_per_busbw_gbps", "cheapest"])

    @property
    def crossovers(self):
        return list(self.data.get("crossovers", []))

    def __repr__(self):
        names = ", ".join(f["fabric"] for f in self.data.get("fabrics", []))
        return f"<rocelab.Comparison {names}; {len(self.data.get('scale', []))} scale points>"


def _size(value):
    """A size option as bytes: numbers as they are, texts ("64KiB") through the spec's parser."""
    if value is None or isinstance(value, (int, float)):
        return value
    return int(_rocelab.parse_bytes(str(value)))


def compare(spec, fabrics=None, overrides=None, compute_ms_per_step=None, small_message_bytes=None, tune_budget=None,
            tune_method=None, scale_hosts=None, scale_hosts_per_leaf=None, scale_oversubscription=None,
            scale_allreduce_bytes=None, profiles_dir=None, db=DEFAULT_DB, store=True, progress=True, callback=None):
    """Runs the fabric comparison of ``spec`` (a YAML path, usually with a ``compare:``
    section, an Experiment or a workload section). ``callback(line)`` gets each progress
    line. Returns a :class:`Comparison`."""
    exp = as_experiment(spec, overrides)
    exp.validate()
    base = exp.build()
    options = {"fabrics": list(fabrics) if fabrics is not None else None,
               "compute_ms_per_step": compute_ms_per_step, "tune_budget": tune_budget, "tune_method": tune_method,
               "scale_hosts": list(scale_hosts) if scale_hosts is not None else None,
               "scale_hosts_per_leaf": scale_hosts_per_leaf, "scale_oversubscription": scale_oversubscription,
               "profiles_dir": os.fspath(profiles_dir) if profiles_dir is not None else None}
    for key, value in (("small_message_bytes", small_message_bytes), ("scale_allreduce_bytes", scale_allreduce_bytes)):
        options[key] = _size(value)
    if options["profiles_dir"] is None and exp.path is None:
        options["profiles_dir"] = os.path.join(source_dir(), "examples", "fabric-profiles")
    options = {k: v for k, v in options.items() if v is not None}

    run_store = Store(os.fspath(db), read_only=False) if store and db is not None else None
    try:
        # Progress: one step per fabric and scenario line the comparison reports.
        data, html = run_reported(
            lambda on_progress: _rocelab.compare(base, exp.path or "", options,
                                                 run_store._store if run_store else None, on_progress),
            f"compare {base.name or 'spec'}", progress, callback,
            "comparison interrupted; the runs it finished are in the store")
    finally:
        if run_store is not None:
            run_store.close()
    return Comparison(data, html)
