"""Experiment specs in Python.

A spec is the same object ``rocelab run`` reads: every field has a dotted path in one
C++ field table (experiments/spec/spec.hpp), values are text with units (``"20KiB"``,
``"10us"``, ``"100Gbps"``), and errors are the CLI's, raised as :class:`SpecError` with
``field`` set. The classes here only turn keyword arguments into dotted assignments::

    exp = rocelab.Experiment(
        rocelab.Incast(senders=16, flow_bytes="64KiB"),
        switch=rocelab.Switch(ecn=rocelab.Ecn(kmin_bytes="20KiB", kmax_bytes="200KiB", pmax=0.2)),
        nic=rocelab.Nic(dcqcn=rocelab.Dcqcn(rpg_time_reset=300)))
    exp = rocelab.load_spec("examples/incast-16to1.yaml", {"switch.pfc.enabled": False})

Each assignment is checked against the field table as soon as it is made (a misspelt
keyword fails at the call that has it); cross-field checks run in :meth:`Experiment.validate`
and before every run.
"""

import os

from . import _rocelab
from .errors import SpecError

__all__ = [
    "Experiment", "load_spec", "Section", "Topology", "Switch", "Pfc", "Ecn", "Nic", "Dcqcn",
    "Incast", "AllReduce", "Background", "Twin", "format_value", "fields",
]


def format_value(value):
    """A Python value as spec text: booleans lower case, sequences comma-separated."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, range)):
        return ",".join(format_value(v) for v in value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return str(value)


def fields():
    """Every spec field as a list of dicts (path, type, help, choices)."""
    return [dict(path=p, type=t, help=h, choices=list(c)) for p, t, h, c in _rocelab.fields()]


class Section:
    """Keyword arguments under a dotted prefix; nested sections may be passed as values."""

    prefix = ""

    def __init__(self, **values):
        self._assignments = []
        for key, value in values.items():
            path = f"{self.prefix}.{key}" if self.prefix else key
            if isinstance(value, Section):
                for sub_path, sub_value in value.assignments():
                    self._assignments.append((sub_path, sub_value))
                continue
            self._assignments.append((path, format_value(value)))
        _check(self._assignments)

    def assignments(self):
        """The (path, text) pairs this section sets, in order."""
        return list(self._assignments)

    def __repr__(self):
        inner = ", ".join(f"{p}={v!r}" for p, v in self._assignments)
        return f"{type(self).__name__}({inner})"


def _check(assignments):
    scratch = _rocelab.Spec()
    for path, text in assignments:
        scratch.set(path, text, "python")


class Topology(Section):
    """``topology.*``: type (single_switch | leaf_spine | fat_tree), hosts, k, link_gbps, link_delay_ns, ..."""
    prefix = "topology"


class Pfc(Section):
    """``switch.pfc.*``: enabled, priorities, pause_quanta, headroom_bytes, xon_offset_bytes, cable_m."""
    prefix = "switch.pfc"


class Ecn(Section):
    """``switch.ecn.*``: enabled, kmin_bytes, kmax_bytes, pmax, queues."""
    prefix = "switch.ecn"


class Switch(Section):
    """``switch.*``: buffer_bytes, cell_bytes, dynamic_th, ..., pfc=Pfc(...), ecn=Ecn(...)."""
    prefix = "switch"


class Dcqcn(Section):
    """``nic.dcqcn.*`` by the mlx5 knob names (rpg_time_reset, rpg_ai_rate, min_time_between_cnps, ...)."""
    prefix = "nic.dcqcn"


class Nic(Section):
    """``nic.*``: mtu_bytes, data_priority, dcqcn_enabled, dcqcn=Dcqcn(...), ..."""
    prefix = "nic"


class Twin(Section):
    """``twin.*``: stop_ns, queue_sample_interval_ns, hpcc_ns3_compat."""
    prefix = "twin"


class Incast(Section):
    """``workload.incast.*``: senders (or sender_hosts), receiver, flow_bytes, rounds, round_gap_ns, ..."""
    prefix = "workload.incast"


class AllReduce(Section):
    """``workload.allreduce.*``: algorithm (ring | halving_doubling | tree |
    hierarchical_ring | hierarchical_tree), ranks, bytes, slices, iterations, ..."""
    prefix = "workload.allreduce"


class Background(Section):
    """``workload.background.*``: cdf (websearch | hadoop | file), load, hosts, duration_ns, ..."""
    prefix = "workload.background"


class Experiment:
    """A spec: a YAML file or the defaults, then assignments in order.

    Positional arguments are sections (workloads, Switch(...), ...); keyword arguments are
    either sections (``switch=Switch(...)``) or top-level fields (``backend``, ``seed``,
    ``repeats``, ``name``)."""

    def __init__(self, *sections, path=None, overrides=None, **top):
        self.path = os.fspath(path) if path is not None else None
        self._assignments = []
        for s in sections:
            self._add(s)
        for key, value in top.items():
            self._add(value if isinstance(value, Section) else (key, value))
        if overrides:
            for key, value in dict(overrides).items():
                self._add((key, value))
        self.build()  # fails here, at the line that built it, when something is wrong

    def _add(self, item):
        if isinstance(item, Section):
            self._assignments.extend(item.assignments())
        elif isinstance(item, tuple) and len(item) == 2:
            self._assignments.append((str(item[0]), format_value(item[1])))
        else:
            raise TypeError(f"expected a spec section (Incast, Switch, ...) or (path, value), got {item!r}")

    def build(self):
        """The C++ spec: the file (or the defaults) with every assignment applied."""
        spec = _rocelab.Spec.load(self.path) if self.path else _rocelab.Spec()
        for path, text in self._assignments:
            spec.set(path, text, f"python {path}={text}")
        return spec

    def set(self, path, value):
        """A copy with one more field set."""
        return self.with_overrides({path: value})

    def with_overrides(self, overrides):
        """A copy with the fields of ``overrides`` (path -> value) set."""
        out = Experiment.__new__(Experiment)
        out.path = self.path
        out._assignments = list(self._assignments)
        for key, value in dict(overrides or {}).items():
            out._add((key, value))
        out.build()
        return out

    def get(self, path):
        """A field's value as the resolved spec writes it."""
        return self.build().get(path)

    def validate(self):
        """The cross-field checks ``rocelab run`` makes (kmin <= kmax, a workload, ...)."""
        self.build().validate()
        return self

    def to_yaml(self):
        """The resolved spec (every field), loadable by ``rocelab run``."""
        return self.build().to_yaml()

    @property
    def assignments(self):
        return list(self._assignments)

    def __repr__(self):
        src = f"path={self.path!r}, " if self.path else ""
        return f"Experiment({src}{len(self._assignments)} fields set)"


def load_spec(path, overrides=None):
    """A YAML spec file with ``overrides`` (path -> value) applied, as ``--set`` does."""
    return Experiment(path=path, overrides=overrides)


def as_experiment(spec, overrides=None):
    """Whatever lab.run() was given (Experiment, path, workload section) as an Experiment."""
    if isinstance(spec, Experiment):
        return spec.with_overrides(overrides) if overrides else spec
    if isinstance(spec, Section):
        return Experiment(spec, overrides=overrides)
    if isinstance(spec, (str, os.PathLike)):
        return load_spec(spec, overrides)
    raise TypeError(f"a spec is an Experiment, a workload such as Incast(...), or a YAML path; got {type(spec).__name__}")
