"""Switch buffer validation from Python: what ``rocelab buffers`` runs.

``rocelab.buffers(spec, profiles=[...])`` takes a workload with an incast and switch
profiles (examples/fabric-profiles/*.yaml, or a profile's name there) and answers, per
profile, on the twin (experiments/buffers/buffers.hpp): the PFC headroom per port and what its
reserve leaves of the buffer, the largest loss-free incast degree with and without PFC,
and, given ``p99_target``, the smallest buffer that keeps the workload's p99 FCT under it::

    v = rocelab.buffers("examples/incast-16to1.yaml", ["roce-shallow-buffer", "roce-deep-buffer"],
                        overrides={"workload.incast.flow_bytes": "2MiB"}, p99_target="3ms")
    v.profiles        # one row per profile
    v.probes          # every twin run of the searches
    v.plot_p99_vs_buffer(); v.report()

Runs with the GIL released; Ctrl-C raises :class:`rocelab.Interrupted`.
"""

import os

import pandas as pd

from . import _rocelab
from ._html_report import HtmlReport, run_reported
from ._installation import source_dir
from .spec import as_experiment

__all__ = ["BufferValidation", "buffers"]


class BufferValidation(HtmlReport):
    """``profiles`` and ``probes`` DataFrames, ``data`` (the JSON as a dict), ``report()``."""

    _files = ("buffers.html", "buffers.json")

    @property
    def profiles(self):
        """One row per profile (indexed by its name); headroom figures as ``headroom.*``."""
        rows = []
        for p in self.data["profiles"]:
            row = {k: v for k, v in p.items() if not isinstance(v, (list, dict))}
            row.update({f"headroom.{k}": v for k, v in p["headroom"].items()})
            rows.append(row)
        return pd.DataFrame(rows).set_index("profile")

    @property
    def probes(self):
        """Every twin run of the searches: profile, search, degree, buffer_bytes, drops,
        pause_frames, fct_p99_ns, complete."""
        rows = [{"profile": p["profile"], **q} for p in self.data["profiles"] for q in p["probes"]]
        return pd.DataFrame(rows, columns=["profile", "search", "degree", "buffer_bytes", "drops", "pause_frames",
                                           "fct_p99_ns", "complete"])

    def plot_p99_vs_buffer(self, ax=None):
        """p99 FCT against buffer size from the buffer search's runs, with the target."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))
        probes = self.probes
        probes = probes[(probes["search"] == "buffer_for_target") & probes["complete"]]
        for name, g in probes.groupby("profile"):
            g = g.sort_values("buffer_bytes")
            ax.plot(g["buffer_bytes"] / 2**20, g["fct_p99_ns"] / 1e3, marker="o", label=name)
        if self.data.get("p99_target_ns"):
            ax.axhline(self.data["p99_target_ns"] / 1e3, color="tab:red", linestyle="--", label="target")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("switch buffer (MiB)")
        ax.set_ylabel("p99 FCT (us)")
        ax.grid(True, alpha=0.3)
        ax.legend()
        return ax

    def __repr__(self):
        return f"<rocelab.BufferValidation {', '.join(p['profile'] for p in self.data['profiles'])}>"


def _profile_path(profile):
    path = os.fspath(profile)
    if os.path.exists(path) or os.sep in path or path.endswith(".yaml"):
        return path
    return os.path.join(source_dir(), "examples", "fabric-profiles", path + ".yaml")


def _duration_ns(value):
    if value is None:
        return 0
    if isinstance(value, (int, float)):
        return int(value)
    return int(_rocelab.parse_duration_ns(str(value)))


def buffers(spec, profiles, p99_target=None, overrides=None, max_buffer_factor=8.0, tolerance=0.05, max_degree=0,
            progress=True, callback=None):
    """Validates the switch buffers of ``profiles`` (paths, or names under
    examples/fabric-profiles) for ``spec``'s workload. ``p99_target``: "2ms" or ns.
    ``callback(line)`` gets each run's progress line. Returns a :class:`BufferValidation`."""
    exp = as_experiment(spec, overrides)
    exp.validate()
    paths = [_profile_path(p) for p in ([profiles] if isinstance(profiles, (str, os.PathLike)) else profiles)]
    spec_built = exp.build()
    data, html = run_reported(
        lambda on_progress: _rocelab.buffers(spec_built, paths, p99_target_ns=_duration_ns(p99_target),
                                             max_buffer_factor=float(max_buffer_factor),
                                             buffer_tolerance=float(tolerance), max_degree=int(max_degree),
                                             on_progress=on_progress),
        "buffers", progress, callback, "buffer validation interrupted")
    return BufferValidation(data, html)
