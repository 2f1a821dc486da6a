"""rocelab from Python: RoCEv2 congestion experiments on the digital twin, the virtual
lab and real labs, with records as pandas DataFrames.

    import rocelab
    lab = rocelab.twin()
    run = lab.run(rocelab.Incast(senders=16, flow_bytes="64KiB"),
                  overrides={"switch.ecn.kmin_bytes": "20KiB"})
    run.flows.describe(); run.summary(); run.plot_fct_cdf()
    with rocelab.open_store("rocelab.db") as store:
        store.runs()        # a row per run: its results and a column per parameter

The C++ core is the private extension ``rocelab._rocelab`` (typed in _rocelab.pyi; the
package ships py.typed); this package is the Pythonic layer around it (README, "Python").
Its modules import one another without cycles (tests/python/test_package.py): errors,
progress and _installation import nothing of the package; run builds on _html_report;
store on run; tune on neither; lab on run, store, spec and tune; the result modules
(buffers, compare, qualify) on spec, store and _installation, never on lab.
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
