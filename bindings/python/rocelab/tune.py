"""Tuning switch ECN/PFC thresholds and DCQCN knobs from Python.

``lab.tune(spec, ...)`` runs the sweep ``rocelab tune`` runs (experiments/tuning/tuning.hpp:
Bayesian optimisation with a Gaussian process, or grid / random search) on the twin,
trials in parallel threads with the GIL released; on a lab from :func:`rocelab.connect`,
each trial runs on the lab behind the controller, one at a time, and is stored there. After every trial, on the calling
thread: the trial's run (one run, a repeat per search seed) and the trial are written to
the run store by the sweep session ``rocelab tune`` uses (experiments/tuning/sweep_session.hpp),
the progress bar shows the best feasible objective so far, and ``callback(trial)`` is
called. The sweep is the CLI's: a sweep of the same name, spec and search (parameter
ranges, objective, method, seed) resumes from its stored trials, whether ``rocelab tune`` or
``lab.tune`` began it; ``resume=False`` starts a new one, ``resume=<sweep id>`` continues
that one. Ctrl-C stops after the trials in flight; :class:`rocelab.Interrupted` carries the
partial :class:`TuningResult` (run the same call again to resume).

What to search comes from the spec file's ``tuning:`` section or from the arguments::

    result = lab.tune("examples/tune-incast.yaml", budget=20)
    result = lab.tune(exp,
                      parameters=[{"path": "switch.ecn.kmin_bytes", "min": "5KB", "max": "200KB", "log": True},
                                  {"path": "switch.ecn.pmax", "min": 0.01, "max": 1, "log": True}],
                      objective={"incast.slowdown_p99": 1, "paused_us": 0.01},
                      constraints={"drops": {"max": 0}}, budget=20, method="bayes")
    lab.run(exp, overrides=result.best_overrides)

After the trials, PFC only and the vendor defaults run as baselines on the trials' common
seeds (stored in the sweep, reused when it resumes); the best trial is re-run with the
baselines on fresh seeds, and it is the answer only if it beats both beyond the paired 95%
CI, else a baseline is (experiments/tuning/tuning_decision.hpp, docs/tuning.md)::

    result.answer                # the answer in one sentence, as `rocelab tune` prints it first
    result.decision["text"]      # that sentence, then the evidence per baseline
    result.baselines["pfc_only"]["objective"]
    result.best["baseline"]      # "pfc_only" or "vendor_default" when a baseline is the answer, else None
    result.best["ci"]            # 95% interval of the objective on the fresh seeds (Student t)
    result.best["at_edge"]       # tuned paths within 2% of their range's end
    result.pareto                # DataFrame of the front: params, the two metrics, trial
    result.plot_pareto()
"""

import functools
import json
import math
import os

import pandas as pd

from . import _rocelab
from ._installation import rocelab_binary
from .errors import Interrupted, RocelabError
from .progress import ProgressBar

__all__ = ["TuningResult", "tune"]


class TuningResult:
    """A sweep's outcome.

    - ``answer``: the answer in one sentence, the one ``rocelab tune`` prints first under
      "answer" (experiments/tuning/tuning_baselines.hpp, answer_sentence); None when the
      baselines did not run (a lab behind a controller, an interrupted sweep).
    - ``best``: the answer as a dict (params, objective, ci, at_edge, baseline; the
      trial's values and ``metrics``, its run summary, when a trial is the answer).
    - ``trials``: one row per trial (DataFrame, made once); ``best_overrides``.
    - ``decision``, ``baselines``, ``pareto``: the rule's outcome and its evidence;
      ``answer_data`` all of it as ``rocelab tune --json`` reports it.
    - ``exports``: with ``export_dir=``, the files written there as ``rocelab tune --json``
      names them (best.yaml, trials.csv, tuning.html, and the SONiC and mlx5 settings for a
      hardware configuration, or why there are none); else None.
    """

    def __init__(self, settings, trials, best, applied, sweep_id=None, answer_data=None, answer=None,
                 executor=None, placement=None):
        self.settings = settings
        self._trials = trials
        self._applied = applied
        self.sweep_id = sweep_id
        self.answer = answer
        self.answer_data = answer_data
        self.executor = executor  # executor=: kind, workers, controller, slurm_job, slurm_tasks
        self.exports = None
        self.placement = dict(placement or {})  # trial index -> where it ran (worker.slurm_job, worker.node, ...)
        self.baselines = answer_data["baselines"] if answer_data else {}
        # The rule's outcome (docs/tuning.md, "The rule"): answer, contender, per-baseline
        # verdicts with their paired CIs, and the verdict's lines (decision["text"]).
        self.decision = answer_data["decision"] if answer_data else None
        self.best = _with_metrics(best)
        if answer_data:
            chosen = answer_data["best"]
            if chosen.get("trial") is not None and best is not None and best["index"] == chosen["trial"]:
                self.best = {**self.best, **chosen}
            elif chosen.get("trial") is not None:
                self.best = {**_with_metrics(next(t for t in trials if t["index"] == chosen["trial"])), **chosen}
            else:  # a baseline won
                self.best = {**chosen, "index": None, "values": dict(chosen["params"])}

    @property
    def pareto(self):
        """The Pareto front of the trade-off (victim p99 slowdown or the objective's first
        flow metric, against paused_us) over trials and baselines, one row per point."""
        if not self.answer_data:
            return pd.DataFrame()
        x, y = self.answer_data["pareto_axes"]["x"], self.answer_data["pareto_axes"]["y"]
        return pd.DataFrame([{"label": p["label"], "trial": p["trial"], "baseline": p["baseline"], x: p[x], y: p[y],
                              **p["params"]} for p in self.answer_data["pareto"]])

    def plot_pareto(self, ax=None):
        """Every trial and baseline on the trade-off's axes, the front highlighted. Returns the Axes."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        if not self.answer_data:
            return ax
        x, y = self.answer_data["pareto_axes"]["x"], self.answer_data["pareto_axes"]["y"]
        pts = self.answer_data["pareto_points"]
        ax.scatter([p[x] for p in pts], [p[y] for p in pts], s=12, c="tab:gray", label="trial or baseline")
        front = sorted((p[x], p[y]) for p in pts if p["on_front"])
        ax.plot([f[0] for f in front], [f[1] for f in front], "o-", color="tab:red", label="Pareto front")
        for p in pts:
            if p["baseline"]:
                ax.annotate(p["baseline"], (p[x], p[y]), fontsize=8)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.legend()
        ax.grid(True, alpha=0.3)
        return ax

    @functools.cached_property
    def trials(self):
        """One row per trial: index, the tuned paths' values, objective (NaN when not
        evaluated), feasible, evaluated, violated, error, run_id and where it ran."""
        rows = []
        for t in self._trials:
            row = {"index": t["index"], **t["values"], "objective": t["objective"] if t["evaluated"] else math.nan,
                   "feasible": t["feasible"], "evaluated": t["evaluated"], "violated": t["violated"],
                   "error": t["error"], "run_id": t["run_id"] or None, **self.placement.get(t["index"], {})}
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def best_overrides(self):
        """The best feasible trial's values as ``overrides`` for lab.run (path -> text)."""
        if self.best is None:
            return {}
        if self.best.get("index") is None:  # a baseline won: its fields
            return {p: (str(v).lower() if isinstance(v, bool) else _text(v)) for p, v in self.best["params"].items()}
        return dict(self._applied.get(self.best["index"]) or
                    {p: _text(v) for p, v in self.best["values"].items()})

    def plot_convergence(self, ax=None):
        """Objective per trial and the best feasible so far. Returns the Axes."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        df = self.trials.sort_values("index")
        feasible = df[df["feasible"] & df["evaluated"]]
        ax.scatter(df["index"], df["objective"], s=12, c=["tab:blue" if f else "tab:gray" for f in df["feasible"]],
                   label="trial (grey: infeasible)")
        best = feasible.set_index("index")["objective"].cummin().reindex(df["index"]).ffill()
        ax.step(df["index"], best, where="post", color="tab:red", label="best feasible")
        ax.set_xlabel("trial")
        ax.set_ylabel("objective")
        ax.legend()
        ax.grid(True, alpha=0.3)
        return ax

    def __repr__(self):
        if not self.best:
            best = "no feasible trial"
        elif self.best.get("index") is None:
            best = f"best {self.best['objective']:.4g}: {self.best['label']}"
        else:
            best = f"best {self.best['objective']:.4g} at trial {self.best['index']}"
        answer = f", answer {self.decision['answer']}" if self.decision else ""
        return f"<rocelab.TuningResult {self.settings['method']} {len(self._trials)} trials, {best}{answer}>"


def _with_metrics(trial):
    """A trial dict with its run summary parsed: ``metrics`` (a dict, or None when it has
    none) in place of the JSON text ``metrics_json``."""
    if trial is None:
        return None
    out = {k: v for k, v in trial.items() if k != "metrics_json"}
    out["metrics"] = json.loads(trial["metrics_json"]) if trial.get("metrics_json") else None
    return out


def _text(v):
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _tuning_yaml(exp, parameters, objective, constraints, seed, require_complete):
    if parameters is None:
        if exp.path is None:
            raise ValueError("give parameters= (and objective=) or a spec file with a tuning: section")
        with open(exp.path) as f:
            return f.read(), exp.path
    section = {"parameters": list(parameters)}
    if isinstance(objective, dict):
        objective = [{"metric": k, "weight": w} for k, w in objective.items()]
    section["objective"] = list(objective or [])
    if isinstance(constraints, dict):
        constraints = [{"metric": k, **bound} for k, bound in constraints.items()]
    if constraints:
        section["constraints"] = list(constraints)
    if seed is not None:
        section["seed"] = seed
    if require_complete is not None:
        section["require_complete"] = require_complete
    # JSON is YAML: the same loader (tuning_spec.hpp) reads it, with its checks and errors.
    return json.dumps({"tuning": section}), "<python tuning>"


class TrialRecord(dict):
    """One trial as ``callback(trial)`` gets it: a dict (index, values, applied, objective,
    feasible, evaluated, error, run_id, metrics) that prints as one short line; its
    ``metrics`` (the run summary) are there to read, not to print."""

    def __repr__(self):
        state = (f"objective {self['objective']:.4g}{'' if self.get('feasible') else ' (infeasible)'}"
                 if self.get("evaluated") else f"failed: {self.get('error', '')}")
        applied = ", ".join(f"{k}={v}" for k, v in (self.get("applied") or {}).items())
        return f"trial {self.get('index')}: {state}; {applied}"

    __str__ = __repr__


def _executor(executor, workers, slurm, listen, work_dir):
    """The executor= arguments as the extension takes them (None: trials in threads here)."""
    if executor in (None, "threads"):
        if workers is not None or slurm or listen is not None:
            raise ValueError("workers=, slurm= and listen= need executor='local' or executor='slurm'")
        return None
    if executor not in ("local", "slurm"):
        raise ValueError(f"executor={executor!r}: expected 'local' or 'slurm'")
    if slurm and executor != "slurm":
        raise ValueError("slurm= options need executor='slurm'")
    e = {"kind": executor, "workers": int(workers if workers is not None else 2),
         "slurm_opts": [f"{k}={v}" for k, v in (slurm or {}).items()], "rocelab_binary": rocelab_binary()}
    if e["workers"] < 1:
        raise ValueError(f"workers={workers}: at least 1")
    if listen is not None:
        e["listen"] = listen
    if work_dir is not None:
        e["work_dir"] = str(work_dir)
    return e


def tune(lab, spec, parameters=None, objective=None, constraints=None, budget=None, method=None, parallelism=None,
         name=None, seed=None, require_complete=None, callback=None, progress=True, overrides=None, resume=True,
         fresh_seeds=5, executor=None, workers=None, slurm=None, listen=None, work_dir=None, export_dir=None,
         export_for_gbps=None, force=False):
    executor_args = _executor(executor, workers, slurm, listen, work_dir)
    exp = lab._prepare(spec, overrides)
    base = exp.build()
    text, source = _tuning_yaml(exp, parameters, objective, constraints, seed, require_complete)
    # The sweep's settings and name as `rocelab tune` resolves them (a spec file's stem names
    # a sweep whose section and spec do not), so both keep and resume the same sweep.
    default_name = os.path.splitext(os.path.basename(exp.path))[0] if exp.path else ""
    args = dict(source=source, budget=budget or 0, method=method or "",
                parallelism=(executor_args["workers"] if executor_args else parallelism) or 0, name=name or "",
                default_name=default_name)
    settings = _rocelab.tuning_settings(base, text, **args)

    # The sweep is opened or resumed, and each trial stored, by the C++ sweep session
    # (experiments/tuning/sweep_session.hpp), before on_trial sees the trial.
    store = lab.store._store if lab.store_runs else None
    applied = {}
    placements = {}  # trial index -> where it ran (worker.slurm_job, worker.node, ...)
    best = [None]
    bar = ProgressBar(settings["budget"], label=f"tune {settings['name']}", enabled=progress)

    def on_trial(trial, applied_texts):
        applied[trial["index"]] = dict(applied_texts)
        placement = dict(trial.get("placement") or {})
        if placement:
            placements[trial["index"]] = placement
        if trial["evaluated"] and trial["feasible"] and (best[0] is None or trial["objective"] < best[0]):
            best[0] = trial["objective"]
        note = f"best {best[0]:.4g}" if best[0] is not None else "no feasible trial yet"
        if trial.get("workers"):
            note += f"; {trial['workers']}"
        bar.update(trial["index"] + 1, note=note)
        if callback is not None:
            t = TrialRecord(_with_metrics(trial))
            t.pop("workers", None)
            # The local store's run, or the run a controller stored for the trial.
            t["run_id"] = trial["run_id"] or None
            t["applied"] = dict(applied_texts)
            callback(t)

    # A lab behind a controller runs each trial there (one at a time, or on the workers an
    # executor attached to it); the controller stores the runs, and each trial's run_id is
    # the controller's.
    remote = {}
    if getattr(lab, "address", None) and executor_args is not None:
        # Workers attached to the running controller: it hands them the trials and stores the runs.
        if not lab.token_file:
            raise ValueError("executor= on a connected lab needs rocelab.connect(..., token_file=F): "
                             "the workers read the controller's token from that file")
        executor_args.update(controller=lab.address, token_file=lab.token_file)
    elif getattr(lab, "address", None):
        remote = dict(controller=lab.address, token=lab._token, connect_timeout_ms=int(lab.connect_timeout_s * 1000))
    try:
        out = _rocelab.tune(base, text, on_trial=on_trial, **args, **remote, store=store, resume=resume,
                            fresh_seeds=fresh_seeds, executor=executor_args,
                            export_dir=os.fspath(export_dir) if export_dir is not None else "",
                            export_for_gbps=export_for_gbps or 0.0, force=force)
    finally:
        bar.close()
    sweep_id = out["sweep"]
    answer_data = json.loads(out["answer"]) if out.get("answer") else None
    result = TuningResult(out["settings"], out["trials"], out["best"], applied, sweep_id, answer_data,
                          out["answer_sentence"], out.get("executor"), placements)
    result.exports = json.loads(out["exports"]) if out.get("exports") else None
    failure = (result.executor or {}).get("failure")
    if failure and out["interrupted"] is None and len(out["trials"]) < out["settings"]["budget"]:
        raise RocelabError(f"the sweep's workers failed: {failure}; the {len(out['trials'])} trials that ran are "
                           "stored: run the same call again to resume")
    if out["interrupted"] is not None:
        caught = out["interrupted"]
        if isinstance(caught, KeyboardInterrupt):
            raise Interrupted(f"tuning interrupted after {len(out['trials'])} trials; run it again to resume",
                              result) from caught
        raise caught
    return result
