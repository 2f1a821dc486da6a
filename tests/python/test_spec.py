"""Specs from Python: the CLI's field table, values, validation and errors."""

import pytest

import rocelab
from conftest import EXAMPLES, run_cli


def test_sections_become_dotted_fields():
    exp = rocelab.Experiment(
        rocelab.Incast(senders=8, flow_bytes="128KiB", rounds=2),
        switch=rocelab.Switch(buffer_bytes="16MiB", ecn=rocelab.Ecn(kmin_bytes="20KiB", kmax_bytes="200KiB", pmax=0.1),
                              pfc=rocelab.Pfc(enabled=False)),
        nic=rocelab.Nic(dcqcn=rocelab.Dcqcn(rpg_time_reset=300)),
        seed=7)
    assert exp.get("workload.incast.senders") == "8"
    assert exp.get("workload.incast.enabled") == "true"
    assert exp.get("workload.incast.rounds") == "2"
    assert exp.get("switch.ecn.pmax") == "0.1"
    assert exp.get("switch.pfc.enabled") == "false"
    assert exp.get("seed") == "7"
    # Sizes are stored in bytes and written back with units the loader reads.
    spec = rocelab._rocelab.Spec.parse(exp.to_yaml(), "roundtrip")
    for path in ("switch.ecn.kmin_bytes", "switch.buffer_bytes", "workload.incast.flow_bytes",
                 "nic.dcqcn.rpg_time_reset"):
        assert spec.get(path) == exp.get(path), path


def test_load_spec_with_overrides():
    exp = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml", {"switch.ecn.kmin_bytes": "20KiB", "repeats": 2})
    assert exp.get("switch.ecn.kmin_bytes") == rocelab.Experiment(("switch.ecn.kmin_bytes", "20480")).get(
        "switch.ecn.kmin_bytes")
    assert exp.get("repeats") == "2"
    assert exp.get("workload.incast.senders") == "16"  # from the file
    base = rocelab.load_spec(EXAMPLES / "incast-16to1.yaml")
    assert base.get("switch.ecn.kmin_bytes") != exp.get("switch.ecn.kmin_bytes")
    assert exp.set("seed", 3).get("seed") == "3" and exp.get("seed") == "1"  # copies


def test_unknown_field_names_it_and_the_nearest():
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.Incast(sendrs=16)
    assert e.value.field == "workload.incast.sendrs"
    assert "workload.incast.senders" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_bad_value_names_the_field():
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.Incast(senders=16, flow_bytes="lots")
    assert e.value.field == "workload.incast.flow_bytes"
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.Ecn(pmax=2)
    assert e.value.field == "switch.ecn.pmax"
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.load_spec(EXAMPLES / "incast-16to1.yaml", {"switch.ecn.kmin_bytes": "-5KiB"})
    assert e.value.field == "switch.ecn.kmin_bytes"


def test_unknown_backend():
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.Experiment(rocelab.Incast(senders=2), backend="quantum")
    assert e.value.field == "backend"


def test_cross_field_check_names_the_field():
    exp = rocelab.Experiment(rocelab.Incast(senders=4), rocelab.Ecn(kmin_bytes="400KiB", kmax_bytes="100KiB"))
    with pytest.raises(rocelab.SpecError) as e:
        exp.validate()
    assert e.value.field == "switch.ecn.kmin_bytes"
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.Experiment().validate()  # no workload
    assert e.value.field == "workload"
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.Experiment(rocelab.Topology(hosts=4), rocelab.Incast(senders=8)).validate()
    assert e.value.field.startswith("workload.incast")


def test_yaml_errors_carry_file_line_and_field_like_the_cli(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("backend: twin\nswitch:\n  ecn:\n    kmin_byts: 20KiB\nworkload:\n  incast:\n    senders: 2\n")
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.load_spec(bad)
    assert e.value.field == "switch.ecn.kmin_byts"
    assert f"{bad}:4" in str(e.value)
    cli = run_cli("run", str(bad), "--json", cwd=tmp_path)
    assert cli.returncode == 2
    assert str(e.value) in cli.stderr  # the same message, word for word


def test_override_error_matches_cli(tmp_path):
    with pytest.raises(rocelab.SpecError) as e:
        rocelab.load_spec(EXAMPLES / "incast-16to1.yaml", {"switch.ecn.pmax": "2"}).validate()
    cli = run_cli("run", str(EXAMPLES / "incast-16to1.yaml"), "--set", "switch.ecn.pmax=2", cwd=tmp_path)
    assert cli.returncode == 2
    # Python names its origin "python <path>=<value>" where the CLI says "--set ..."; the
    # rest of the message is the CLI's.
    assert str(e.value).split(": ", 1)[1] in cli.stderr


def test_field_table_is_exposed():
    table = rocelab.fields()
    paths = {f["path"] for f in table}
    assert {"switch.ecn.kmin_bytes", "nic.dcqcn.rpg_time_reset", "workload.incast.senders", "backend"} <= paths
    backend = next(f for f in table if f["path"] == "backend")
    assert "twin" in backend["choices"]


def test_lab_backend_is_unsupported_here(lab):
    exp = rocelab.Experiment(rocelab.Incast(senders=2), rocelab.Topology(hosts=3), backend="lab")
    with pytest.raises(rocelab.UnsupportedError):
        rocelab._rocelab.run_experiment(exp.build())
