"""rocelab from Python: RoCEv2 congestion experiments on the digital twin, the virtual
lab and real labs, with records as pandas DataFrames.

    import rocelab
    lab = rocelab.twin()
    run = lab.run(rocelab.Incast(senders=16, flow_bytes="64KiB"),
                  overrides={"switch.ecn.kmin_bytes": "20KiB"})
    run.flows.describe(); run.summary(); run.plot_fct_cdf()
    rocelab.open_store("rocelab.db").runs()

The C++ core is the private extension ``rocelab._rocelab``; this package is the
Pythonic layer around it (README, "Python").
"""

from . import _rocelab
from .buffers import BufferValidation, buffers
from .qualify import Qualification, qualify
from .compare import Comparison, compare
from .errors import Interrupted, RocelabError, SpecError, StoreError, UnavailableError, UnsupportedError
from .lab import Lab, VirtualLab, connect, twin, virtual_lab
from .run import Run
from .spec import (AllReduce, Background, Dcqcn, Ecn, Experiment, Incast, Nic, Pfc, Switch, Topology, Twin, fields,
                   load_spec)
from .store import Store, open_store

__all__ = [
    "AllReduce", "Background", "BufferValidation", "Comparison", "Dcqcn", "Ecn", "Experiment", "Incast", "Interrupted", "Lab", "Nic", "Pfc",
    "RocelabError", "Run", "SpecError", "Store", "StoreError", "Switch", "Topology", "Twin", "UnavailableError",
    "UnsupportedError", "VirtualLab", "buffers", "compare", "connect", "fields", "load_spec", "open_store", "qualify", "Qualification", "twin", "virtual_lab",
]
