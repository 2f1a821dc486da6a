"""rocelab.qualify(): switch qualification of the twin's switch model from Python, the
same checks and figures as `rocelab qualify`."""

import json

import pytest

import rocelab
from conftest import EXAMPLES, run_cli

SPEC = EXAMPLES / "qualify-switch.yaml"
TWIN = {"backend": "twin"}


def test_qualify_the_twin_switch_passes_and_matches_the_cli(tmp_path):
    q = rocelab.qualify(SPEC, overrides=TWIN)
    assert q.passed, q.checks
    checks = q.checks
    assert {"pfc.xoff_threshold", "pfc.headroom", "pfc.xon_threshold", "buffer.shared_limit.queue0", "ecn.curve",
            "pfc_watchdog.detection", "pfc_watchdog.restoration"} <= set(checks.index)
    assert checks["pass"].dtype == bool
    curve = q.ecn_curve
    assert len(curve) == 7 and (curve["samples"] == 200).all()
    assert curve["measured"].iloc[0] == 0.0 and curve["measured"].iloc[-1] == 1.0
    # Every sample marked at the last point: its interval's upper end is 1 only up to
    # rounding, and the plot still draws it.
    ax = q.plot_ecn_curve()
    assert ax.get_legend_handles_labels()[1] == ["configured", "measured (99.9% interval)"]
    # The CLI measures the same switch the same way: the same figures.
    out = run_cli("qualify", str(SPEC), "--set", "backend=twin", "--json", "--out", str(tmp_path / "cli"))
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    assert [c["measured"] for c in cli["checks"]] == checks["measured"].tolist()
    q.save(tmp_path / "py")
    assert 'id="plot-ecn-curve"' in (tmp_path / "py" / "qualify.html").read_text()
    assert json.loads((tmp_path / "py" / "qualify.json").read_text())["passed"]


def test_a_deviating_claim_fails_and_bad_input_is_refused():
    # Qualified against a spec without a PFC watchdog: that check fails, nothing else.
    q = rocelab.qualify(SPEC, overrides={**TWIN, "switch.pfc.watchdog.enabled": "false"}, samples=50)
    failed = q.checks.index[~q.checks["pass"]].tolist()
    assert failed == ["pfc_watchdog.enabled"]
    assert "1 of" not in repr(q) and "checks passed" in repr(q)
    with pytest.raises(rocelab.SpecError):
        rocelab.qualify(SPEC, overrides={**TWIN, "switch.pfc.enabled": "false"})  # nothing lossless to qualify
    with pytest.raises(rocelab.SpecError):
        rocelab.qualify(SPEC, overrides={**TWIN, "switch.ecn.kmin_byte": "1KiB"})
