"""The backend-name check itself: it passes on the tree, and it fails, naming the line, on a
string comparison of a backend's name outside the registry, either way round, while the
registry itself, comments and tests may name backends."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_backend_names  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def make_tree(tmp_path, files):
    for path, text in files.items():
        p = tmp_path / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_the_tree_compares_no_backend_name_outside_the_registry():
    assert check_backend_names.check(ROOT) == []


def test_a_comparison_outside_the_registry_is_refused_either_way_round(tmp_path):
    tree = make_tree(tmp_path, {
        "controller/src/run_lifecycle.cpp": 'if (spec.backend == "lab") {}\n'
                                            'int x = 0;\n'
                                            'if ("twin" != records.backend) {}\n',
        "cli/src/run_command.cpp": 'if (spec->backend != "virtual") {}\n',
    })
    problems = check_backend_names.check(tree)
    assert [p.split(": ")[0] for p in problems] == [
        "cli/src/run_command.cpp:1", "controller/src/run_lifecycle.cpp:1", "controller/src/run_lifecycle.cpp:3"]
    assert check_backend_names.main(["check_backend_names.py", str(tree)]) == 1


def test_the_registry_comments_and_tests_may_name_backends(tmp_path):
    tree = make_tree(tmp_path, {
        "experiments/src/run/backend.cpp": 'if (name == "twin") {}\nif (backend == "twin") {}\n',
        "experiments/include/rocelab/experiments/run/backend.hpp": 'static_assert(backend == "twin");\n',
        "experiments/src/report/report.cpp": '  // a twin run (backend == "twin") has no capture\n'
                                             'if (backend_traits_of(records.backend).simulated) {}\n',
        "tests/experiments/test_backend.cpp": 'EXPECT_TRUE(records.backend == "twin");\n',
    })
    assert check_backend_names.check(tree) == []
    assert check_backend_names.main(["check_backend_names.py", str(tree)]) == 0
