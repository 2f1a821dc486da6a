"""Buffer validation from Python: the same searches as `rocelab buffers`, as DataFrames."""

import json

import pytest

import rocelab
from conftest import EXAMPLES, run_cli

SPEC = EXAMPLES / "incast-16to1.yaml"
BIG_FLOWS = {"workload.incast.flow_bytes": "2MiB"}


def test_buffers_per_profile_match_the_cli(tmp_path):
    lines = []
    v = rocelab.buffers(SPEC, ["roce-shallow-buffer", "roce-deep-buffer"], overrides=BIG_FLOWS, p99_target="3ms",
                        progress=False, callback=lines.append)
    profiles = v.profiles
    assert list(profiles.index) == ["RoCEv2 shallow-buffer Ethernet", "RoCEv2 deep-buffer Ethernet"]
    assert profiles["lossless_degree_pfc"].dtype.kind == "i"
    # With headroom for its cable, PFC keeps every degree loss-free; without it the shallow
    # switch drops before its radix.
    assert (profiles["lossless_degree_pfc"] == profiles["max_degree_searched"]).all()
    shallow = profiles.iloc[0]
    assert shallow["lossless_degree_no_pfc"] < shallow["max_degree_searched"]
    assert shallow["headroom.per_pg_bytes"] > 0 and 0 < shallow["headroom.reserved_share"] < 1
    # Each profile answers the p99 target from valid runs, or reports a headroom shortfall
    # (PFC on and packets dropped) instead of sizing from it.
    assert set(profiles["target_outcome"]) <= {"met", "at_most", "headroom_shortfall"}
    probes = v.probes
    assert set(probes["search"]) == {"degree_pfc", "degree_no_pfc", "buffer_for_target"}
    # "step i of n: <profile>: ...", n = 2 profiles x 3 searches (PFC on, PFC off, the target).
    assert lines and all(line.split(": ")[1] in profiles.index for line in lines)
    assert sorted({line.split(": ")[0] for line in lines}) == sorted(f"step {i} of 6" for i in range(1, 7))

    out = tmp_path / "cli"
    done = run_cli("buffers", str(SPEC), "--set", "workload.incast.flow_bytes=2MiB", "--profile",
                   str(EXAMPLES / "fabric-profiles" / "roce-shallow-buffer.yaml"), "--profile",
                   str(EXAMPLES / "fabric-profiles" / "roce-deep-buffer.yaml"), "--p99-target", "3ms", "--json",
                   "--out", str(out))
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    for py_p, cli_p in zip(v.data["profiles"], cli["profiles"]):
        for key in ("lossless_degree_pfc", "lossless_degree_no_pfc", "buffer_for_target_bytes", "headroom"):
            assert py_p[key] == cli_p[key], key

    ax = v.plot_p99_vs_buffer()
    assert len(ax.lines) >= 2
    assert "lossless-degree" in v.html
    v.save(tmp_path / "py")
    assert (tmp_path / "py" / "buffers.json").exists()


def test_errors_name_the_problem():
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.buffers(SPEC, ["no-such-profile"], progress=False)
    assert "no-such-profile" in str(e.value)
    with pytest.raises(rocelab.SpecError):
        rocelab.buffers(SPEC, ["roce-shallow-buffer"], p99_target="soon", progress=False)
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.buffers(EXAMPLES / "allreduce-ring8.yaml", ["roce-shallow-buffer"], progress=False)
    assert "incast" in str(e.value)
