"""The file-length check itself: a C++ file of a library over 800 lines is reported with
its length, one of 800 is not, and tests, benchmarks and build directories are not
checked."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_file_lengths  # noqa: E402


def make_tree(tmp_path, files):
    for path, lines in files.items():
        p = tmp_path / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("int x;\n" * lines)
    return tmp_path


def test_a_library_file_over_the_limit_is_reported_and_one_at_it_is_not(tmp_path):
    tree = make_tree(tmp_path, {
        "fabric/src/drivers/sonic_switch_driver.cpp": 801,
        "captures/src/capture_file.cpp": 800,
        "protocol/include/rocelab/protocol/messages.hpp": 900,
        "cli/src/run_command.cpp": 10,
    })
    assert check_file_lengths.check(tree) == [
        "fabric/src/drivers/sonic_switch_driver.cpp: 801 lines, more than 800; split it by concern",
        "protocol/include/rocelab/protocol/messages.hpp: 900 lines, more than 800; split it by concern",
    ]
    assert check_file_lengths.main(["check_file_lengths.py", str(tree)]) == 1


def test_tests_benchmarks_and_build_directories_are_not_checked(tmp_path):
    tree = make_tree(tmp_path, {
        "tests/fabric/test_sonic_switch_driver.cpp": 1400,
        "bench/analyze/analyze_bench.cpp": 900,
        "build/generated.cpp": 5000,
        "build-fuzz/generated.hpp": 5000,
        "fabric/src/switch_model.cpp": 700,
    })
    assert check_file_lengths.check(tree) == []
    assert check_file_lengths.main(["check_file_lengths.py", str(tree)]) == 0
