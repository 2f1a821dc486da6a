"""The ECN-versus-PFC notebook with its virtual-lab part (root): the same comparison on
namespaces, the soft switch and soft NICs."""

import pathlib

import pytest

from conftest import is_root
from test_notebooks import execute

NOTEBOOK = pathlib.Path(__file__).resolve().parents[2] / "examples" / "notebooks" / "ecn_vs_pfc_incast.ipynb"


@pytest.mark.skipif(not is_root(), reason="the virtual lab needs root")
def test_ecn_vs_pfc_notebook_on_the_virtual_lab(tmp_path):
    nb = execute(NOTEBOOK, tmp_path, backends="twin,virtual")
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "virtual lab skipped" not in outputs
    import rocelab
    runs = rocelab.open_store(tmp_path / "notebook.db").runs()
    assert (runs["backend"] == "virtual").sum() == 2 and (runs["status"] == "completed").all()
