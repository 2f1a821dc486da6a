"""The layering check itself: it passes on the tree, and it fails, naming the include, on
the edges the architecture forbids (agents -> controller, the experiments core -> agents)
while the experiments' lab adapter may include the agents."""

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
