"""Labs: where experiments run.

- :func:`twin` runs specs on the digital twin (virtual time, no privileges).
- :func:`virtual_lab` brings the virtual lab (namespaces, the soft switch, soft RoCEv2
  NICs) up for a ``with`` block and down afterwards; needs root.
- :func:`connect` talks to a running controller (real labs).

``lab.run(spec, overrides=...)`` runs the spec's repeats and stores them in the run store
(the CLI's ``rocelab.db`` unless ``db=`` says otherwise) as one run, as ``rocelab run``
does: running -> completed / partial / interrupted / failed, each record carrying its
repeat; it returns a :class:`rocelab.Run`. The lab decides the backend: a spec file
that says ``backend: virtual`` runs on the twin when given to ``twin().run``.
"""

import os
import subprocess

from . import _rocelab
from ._installation import rocelab_binary, source_dir
from .errors import Interrupted, RocelabError, UnavailableError
from .progress import ProgressBar
from .run import Run
from .spec import as_experiment, fields
from .store import DEFAULT_DB, Store
from .tune import tune

__all__ = ["Lab", "twin", "virtual_lab", "VirtualLab", "connect", "rocelab_binary", "source_dir", "ControllerLab"]


class Lab:
    """Runs specs on one backend and keeps every run in a run store."""

    backend = "twin"

    def __init__(self, db=DEFAULT_DB, overrides=None, store=True):
        self.db = os.fspath(db) if db is not None else None
        self.overrides = dict(overrides or {})
        self.store_runs = store and self.db is not None
        self._store = None

    @property
    def store(self):
        """The lab's run store (opened read-write on first use)."""
        if self._store is None:
            self._store = Store(self.db, read_only=False)
        return self._store

    def _prepare(self, spec, overrides):
        merged = dict(self.overrides)
        merged.update(overrides or {})
        merged["backend"] = self.backend
        merged.update(self._backend_overrides())
        exp = as_experiment(spec, merged)
        exp.validate()
        return exp

    def _backend_overrides(self):
        return {}

    def _run_options(self):
        return {}

    def run(self, spec, overrides=None, name=None, progress=False):
        """Runs ``spec`` (an Experiment, a workload section such as Incast(...), or a YAML
        path) with ``overrides`` (path -> value, as ``--set``). Ctrl-C stops it within
        milliseconds: the repeat in flight is stored as interrupted with its records so
        far and :class:`rocelab.Interrupted` (a KeyboardInterrupt) is raised."""
        exp = self._prepare(spec, overrides)
        base = exp.build()
        if name is not None:
            base.set("name", str(name), "python")
        spec_name = base.name or (os.path.splitext(os.path.basename(exp.path))[0] if exp.path else "")
        seed0, repeats = base.seed, base.repeats
        parameters = {f["path"]: base.get(f["path"]) for f in fields()}
        bar = ProgressBar(repeats, label=spec_name or "run", enabled=progress)

        def on_repeat(i, seed):
            bar.update(i, note=f"seed {seed}")

        # Stored by the run session `rocelab run` uses (experiments/run/run_session.hpp): one
        # run, each repeat's records as that repeat, its ending decided from the records.
        store = self.store._store if self.store_runs else None
        try:
            out = _rocelab.run_experiment(base, on_repeat=on_repeat, store=store, name=spec_name,
                                          parameters=parameters, **self._run_options())
        finally:
            bar.close()
        records, seeds = out["repeats"], out["seeds"]
        ids = [out["run_id"]] if out["run_id"] is not None else []
        if out["interrupted"] is not None:
            run = Run(records, seeds, spec_name, self.backend, base.to_yaml(), "interrupted", ids,
                      self.db if self.store_runs else None)
            caught = out["interrupted"]
            if isinstance(caught, KeyboardInterrupt):
                raise Interrupted(f"run interrupted after {len(records)} of {repeats} repeats (seeds from {seed0}); "
                                  "stored as interrupted", run) from caught
            raise caught
        # Completed or partial, decided from the records (store/run_ending.hpp).
        status = out["status"] or _rocelab.run_ending(records)["status"]
        return Run(records, seeds, spec_name, self.backend, base.to_yaml(), status, ids,
                   self.db if self.store_runs else None)

    def tune(self, spec, **kwargs):
        """Tunes thresholds with this lab's backend: see :func:`rocelab.tune.tune`."""
        return tune(self, spec, **kwargs)

    def close(self):
        """Closes the lab's run store connection, if one was opened; the lab opens it again
        on its next run. Idempotent."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<rocelab.{type(self).__name__} backend={self.backend} db={self.db}>"


def twin(db=DEFAULT_DB, overrides=None, store=True):
    """The digital twin: specs run in virtual time in this process (GIL released)."""
    return Lab(db=db, overrides=overrides, store=store)


class VirtualLab(Lab):
    """The virtual lab for a ``with`` block: ``rocelab lab up`` on entry, ``lab down`` on
    exit (also after an exception or Ctrl-C). Runs use ``backend: virtual`` on this lab:
    topology.link_gbps is the lab's rate and topology.hosts at most the lab's hosts."""

    backend = "virtual"

    def __init__(self, hosts=8, link_gbps=1.0, buffer_kb=1024, name=None, db=DEFAULT_DB, overrides=None,
                 store=True, capture=True, log_dir="", keep=False):
        super().__init__(db=db, overrides=overrides, store=store)
        self.hosts = int(hosts)
        self.link_gbps = float(link_gbps)
        self.buffer_kb = int(buffer_kb)
        self.name = name or f"rlp{os.getpid() % 100000}"
        self.capture = capture
        self.log_dir = log_dir
        self.keep = keep
        self.up = False

    def _cli(self, *args, check=True):
        cmd = [rocelab_binary(), "lab", *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise RocelabError(f"{' '.join(cmd)}: {done.stderr.strip() or done.stdout.strip()}")
        return done

    def __enter__(self):
        if os.geteuid() != 0:
            raise UnavailableError("the virtual lab needs root (network namespaces, veth pairs)")
        self._cli("up", "--name", self.name, "--hosts", str(self.hosts), "--link-gbps", str(self.link_gbps),
                  "--buffer-kb", str(self.buffer_kb))
        self.up = True
        return self

    def __exit__(self, *exc):
        try:
            if self.up and not self.keep:
                self._cli("down", "--name", self.name, check=False)
                self.up = False
        finally:
            self.close()
        return False

    def status(self):
        return self._cli("status", "--name", self.name).stdout

    def _backend_overrides(self):
        return {"topology.link_gbps": self.link_gbps}

    def _run_options(self):
        return dict(lab_name=self.name, rocelab_binary=rocelab_binary(), keep_lab=True, capture=self.capture,
                    log_dir=self.log_dir)


def virtual_lab(hosts=8, **kwargs):
    """A :class:`VirtualLab` with ``hosts`` hosts, to use in a ``with`` block (root)."""
    return VirtualLab(hosts=hosts, **kwargs)


class ControllerLab(Lab):
    """A lab behind a running controller: specs are resolved here (same validation) and
    submitted as ``rocelab run SPEC --controller ADDR`` submits them; the controller runs
    them on the backend they name and keeps them in its run store. With ``db`` (the
    controller's store file, when readable from here) runs come back with their records;
    otherwise with the summary the controller returns."""

    def __init__(self, address, token, db=None, overrides=None, connect_timeout_s=5.0, token_file=None):
        super().__init__(db=db, overrides=overrides, store=False)
        self.address = address
        self._token = token
        self.token_file = None if token_file is None else str(token_file)  # for workers (tune executor=)
        self.connect_timeout_s = connect_timeout_s

    def _prepare(self, spec, overrides):
        merged = dict(self.overrides)
        merged.update(overrides or {})
        exp = as_experiment(spec, merged)
        exp.validate()
        return exp

    def run(self, spec, overrides=None, name=None, progress=False):
        exp = self._prepare(spec, overrides)
        base = exp.build()
        if name is not None:
            base.set("name", str(name), "python")
        # The controller opens no path a client names: files the spec names travel inlined.
        base.inline_files()
        done = _rocelab.submit_spec(self.address, self._token, base.to_yaml(), exp.path or "<python>",
                                    int(self.connect_timeout_s * 1000))
        if done["interrupted"] is not None:
            caught = done["interrupted"]
            if isinstance(caught, KeyboardInterrupt):
                raise Interrupted(f"run on {self.address} interrupted: the connection was closed, so the "
                                  "controller stops the run and stores it as interrupted with what it measured",
                                  None) from caught
            raise caught
        if done["status"] == "failed":
            raise RocelabError(f"run {done['run']} on {self.address} failed: {done['error']}")
        if self.db is not None and done["run"]:
            with Store(self.db, read_only=True) as store:
                run = store.load(done["run"])
            run._summary_json = done["summary_json"] or None
            return run
        return Run([], [], base.name, base.backend, base.to_yaml(), done["status"], [done["run"]] if done["run"] else [],
                   None, done["summary_json"] or None)

    def tune(self, spec, **kwargs):
        """Tunes on the lab behind the controller: each trial is a run there (one at a
        time), scored from the summary the controller returns. With ``executor=`` (twin
        specs), N workers attach to the controller and it hands them the trials, N at a
        time (``connect(..., token_file=F)``: the workers read the token from F); see
        :func:`rocelab.tune.tune`."""
        return tune(self, spec, **kwargs)

    def __repr__(self):
        return f"<rocelab.ControllerLab {self.address}>"


def connect(address, token=None, token_file=None, db=None, **kwargs):
    """A lab behind a running controller (``rocelab controller --listen ADDR --token-file F``).
    ``token`` or ``token_file`` authenticates (TLS-PSK, as the CLI)."""
    if not getattr(_rocelab, "have_controller_client", False):
        raise UnavailableError(f"cannot connect to {address}: this build of rocelab has no controller client")
    if token is None and token_file is not None:
        with open(token_file) as f:
            token = f.readline().strip()  # the first line, as the CLI reads it
    if not token:
        raise UnavailableError("connect() needs token= or token_file= (the controller's shared token)")
    return ControllerLab(address, token, db=db, token_file=token_file, **kwargs)

