"""Switch qualification from Python: what ``rocelab qualify`` runs.

``rocelab.qualify(spec)`` measures the spec's switch against its own settings, in the
manner of SONiC's QoS tests (experiments/qualify/qualify.hpp): the XOFF and XON points, the
headroom absorbed before a drop, the lossy shared-buffer limit, the ECN marking curve
(200 fills per depth against Kmin, Kmax and Pmax) and a PFC storm with the watchdog's
reaction. ``backend: twin`` qualifies the twin's switch model in virtual time;
``backend: virtual`` the virtual lab's soft switch with real frames (root)::

    q = rocelab.qualify("examples/qualify-switch.yaml", overrides={"backend": "twin"})
    q.passed          # every check passed
    q.checks          # one row per check: measured, expected, tolerance, pass, note
    q.ecn_curve       # one row per depth: samples, marked, measured, expected, interval
    q.plot_ecn_curve(); q.report()

Runs with the GIL released; Ctrl-C raises :class:`rocelab.Interrupted`.
"""

import pandas as pd

from . import _rocelab
from ._html_report import HtmlReport, run_reported
from ._installation import rocelab_binary
from .spec import as_experiment

__all__ = ["Qualification", "qualify"]


class Qualification(HtmlReport):
    """``checks`` and ``ecn_curve`` DataFrames, ``passed``, ``data`` (the JSON as a dict),
    ``report()`` and ``save()``."""

    _files = ("qualify.html", "qualify.json")

    @property
    def passed(self):
        return bool(self.data["passed"])

    @property
    def checks(self):
        """One row per check (indexed by its name)."""
        return pd.DataFrame(self.data["checks"],
                            columns=["name", "what", "unit", "measured", "expected", "tolerance", "pass",
                                     "note"]).set_index("name")

    @property
    def ecn_curve(self):
        """One row per queue depth: depth_bytes, samples, marked, measured, expected,
        ci_low, ci_high (the 99.9% Wilson interval), pass."""
        return pd.DataFrame(self.data["ecn_curve"],
                            columns=["depth_bytes", "samples", "marked", "measured", "expected", "ci_low", "ci_high",
                                     "pass", "note"])

    def plot_ecn_curve(self, ax=None):
        """Measured marking probability with its interval against the configured RED line."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))
        c = self.ecn_curve
        ecn = self.data["ecn"]
        kmin, kmax = ecn["kmin_bytes"] / 1024, ecn["kmax_bytes"] / 1024
        x0 = min(kmin, c["depth_bytes"].min() / 1024) if len(c) else kmin
        x1 = max(kmax, c["depth_bytes"].max() / 1024) if len(c) else kmax
        ax.plot([x0, kmin, kmax, kmax, x1], [0, 0, ecn["pmax"], 1, 1], color="tab:gray", label="configured")
        # The Wilson bounds at 0 and 1 marks in every sample equal the estimate only up to
        # rounding; matplotlib refuses an error bar a rounding below zero.
        below = (c["measured"] - c["ci_low"]).clip(lower=0)
        above = (c["ci_high"] - c["measured"]).clip(lower=0)
        ax.errorbar(c["depth_bytes"] / 1024, c["measured"], yerr=[below, above], fmt="o", capsize=3,
                    label="measured (99.9% interval)")
        ax.set_xlabel("queue depth (KiB)")
        ax.set_ylabel("marking probability")
        ax.grid(True, alpha=0.3)
        ax.legend()
        return ax

    def __repr__(self):
        n = len(self.data["checks"])
        ok = sum(1 for c in self.data["checks"] if c["pass"])
        return f"<rocelab.Qualification {self.data['target']}: {ok} of {n} checks passed>"


def qualify(spec, overrides=None, samples=200, points=7, frame_bytes=None, watchdog=True, lab_name="qualify",
            progress=False):
    """Qualifies ``spec``'s switch against its settings. ``samples`` fills per ECN depth
    point, ``points`` depth points, ``frame_bytes`` the probe size (default: a full RoCE
    frame at the spec's MTU), ``watchdog`` the PFC storm checks. Returns a
    :class:`Qualification`; raises :class:`rocelab.SpecError` for a bad spec."""
    exp = as_experiment(spec, overrides)
    exp.validate()
    built = exp.build()
    data, html = run_reported(
        lambda on_progress: _rocelab.qualify(built, samples=int(samples), points=int(points),
                                             frame_bytes=int(frame_bytes or 0), watchdog=bool(watchdog),
                                             lab_name=lab_name, rocelab_binary=rocelab_binary(),
                                             on_progress=on_progress),
        "qualify", progress, None, "qualification interrupted")
    return Qualification(data, html)
