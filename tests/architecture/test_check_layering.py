"""The layering check itself: it passes on the tree, and it fails, naming the include, on
the edges the architecture forbids (agents -> controller, the experiments core -> agents,
a core -> the fabric adapters: the soft switch and the switch drivers) while the
experiments' lab adapter may include them, and on a table that folds an adapter back
into its core."""

import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_layering  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def make_tree(tmp_path, files):
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "architecture.md", tmp_path / "docs" / "architecture.md")
    headers = {
        "controller/include/rocelab/controller/controller.hpp": "",
        "protocol/include/rocelab/protocol/messages.hpp": "",
        "agents/include/rocelab/agents/lab/virtual_lab.hpp": "",
        "experiments/include/rocelab/experiments/run/runner.hpp": "",
        "fabric/include/rocelab/fabric/drivers/switch_driver.hpp": "",
        "fabric/include/rocelab/fabric/drivers/sonic_switch_driver.hpp": "",
        "fabric/soft_switch/include/rocelab/fabric/soft_switch/soft_switch.hpp": "",
    }
    for path, text in {**headers, **files}.items():
        p = tmp_path / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_the_tree_follows_the_table():
    assert check_layering.check(ROOT) == []


def test_agents_including_the_controller_is_refused(tmp_path):
    tree = make_tree(tmp_path, {
        "agents/src/agent/agent.cpp": '#include "rocelab/protocol/messages.hpp"\n'
                                      '#include "rocelab/controller/controller.hpp"\n',
    })
    problems = check_layering.check(tree)
    assert problems == ["agents/src/agent/agent.cpp:2: agents -> controller (rocelab/controller/controller.hpp) "
                        "is not an allowed edge"]
    assert check_layering.main(["check_layering.py", str(tree)]) == 1


def test_the_experiments_core_including_agents_is_refused_but_its_lab_adapter_may(tmp_path):
    include = '#include "rocelab/agents/lab/virtual_lab.hpp"\n'
    tree = make_tree(tmp_path, {
        "experiments/src/run/runner.cpp": include,
        "experiments/src/lab/virtual_backend.cpp": include + '#include "rocelab/experiments/run/runner.hpp"\n',
    })
    problems = check_layering.check(tree)
    assert len(problems) == 1, problems
    assert problems[0].startswith("experiments/src/run/runner.cpp:1: experiments -> agents")


def test_an_include_no_folder_has_is_reported(tmp_path):
    tree = make_tree(tmp_path, {"store/src/x.cpp": '#include "rocelab/store/missing.hpp"\n'})
    assert check_layering.check(tree) == [
        "store/src/x.cpp:1: includes rocelab/store/missing.hpp, which no include/ directory has"]


def test_the_fabric_adapters_are_for_adapters_but_the_driver_interface_is_the_core_s(tmp_path):
    sonic = '#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"\n'
    soft_switch = '#include "rocelab/fabric/soft_switch/soft_switch.hpp"\n'
    interface = '#include "rocelab/fabric/drivers/switch_driver.hpp"\n'
    tree = make_tree(tmp_path, {
        "experiments/src/tuning/exports.cpp": interface + sonic,
        "experiments/src/lab/sonic_export.cpp": sonic,
        "fabric/src/switch_model.cpp": soft_switch,
        "fabric/src/drivers/soft_switch_driver.cpp": soft_switch + interface,
        "traffic/src/soft_nic/nic_process.cpp": soft_switch,
        "traffic/src/workload.cpp": soft_switch,
    })
    assert check_layering.check(tree) == [
        "experiments/src/tuning/exports.cpp:2: experiments -> fabric_drivers "
        "(rocelab/fabric/drivers/sonic_switch_driver.hpp) is not an allowed edge",
        "fabric/src/switch_model.cpp:1: fabric -> fabric_soft_switch "
        "(rocelab/fabric/soft_switch/soft_switch.hpp) is not an allowed edge",
        "traffic/src/workload.cpp:1: traffic -> fabric_soft_switch "
        "(rocelab/fabric/soft_switch/soft_switch.hpp) is not an allowed edge",
    ]


def test_a_table_that_folds_an_adapter_into_its_core_is_refused(tmp_path):
    tree = make_tree(tmp_path, {})
    doc = tree / "docs" / "architecture.md"
    text = doc.read_text()
    assert "| `fabric_drivers` | `fabric/src/drivers/`, " in text
    doc.write_text(text.replace("| `fabric_drivers` | `fabric/src/drivers/`, ", "| `fabric_drivers` | "))
    problems = check_layering.check(tree)
    assert "docs/architecture.md: adapter fabric/src/drivers/ is not a component of its own (its files belong to fabric)" \
        in problems
