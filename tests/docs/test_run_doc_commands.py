"""The docs runner itself: it fails, naming the page and line, on an unmarked failing
command, a block that does not say its language, a `# hardware` outside a hardware block
and a marker it does not know; it passes a page whose failing commands are marked, and runs
a page's commands in order in one directory (shell, console `$ ` lines, Python)."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run_doc_commands  # noqa: E402

ROOT = HERE.parents[1]
DATA = HERE / "data"


def run(page, *extra):
    binary = os.environ["ROCELAB_BINARY"]
    python_dir = os.environ["ROCELAB_PYTHON_DIR"]
    return subprocess.run([sys.executable, str(HERE / "run_doc_commands.py"), "--source", str(ROOT), "--binary", binary,
                           "--python-dir", python_dir, "--timeout", "120", *extra, str(DATA / page)],
                          capture_output=True, text=True, timeout=600)


def test_an_unmarked_failing_command_fails_naming_its_page_and_line():
    out = run("failing.md")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAIL tests/docs/data/failing.md:7: exit status 2: build/rocelab run examples/no-such-spec.yaml" in out.stderr
    assert "no-such-spec.yaml" in out.stderr  # the command's own error follows
    assert "failing.md:6:" not in out.stderr  # the command that worked is not blamed


@pytest.mark.parametrize("page, line, why", [
    ("untagged.md", 3, "fenced block without a language"),
    ("hardware-comment.md", 4, "says `# hardware` but its block is not marked"),
    ("unknown-marker.md", 3, "unknown marker"),
    ("hardware-without-reason.md", 3, "needs: hardware without a reason"),
    ("hardware-unsaid.md", 6, "does not end with `# hardware`"),
    ("stray-marker.md", 3, "a marker must be the last line before its fenced block"),
], ids=["untagged", "hardware-comment", "unknown-marker", "hardware-without-reason", "hardware-unsaid",
        "stray-marker"])
def test_a_command_neither_runnable_nor_marked_fails_before_anything_runs(page, line, why):
    out = run(page)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"FAIL tests/docs/data/{page}:{line}: " in out.stderr and why in out.stderr, out.stderr
    assert " s  " not in out.stdout  # nothing ran


def test_marked_commands_are_not_run_and_say_why():
    out = run("marked.md")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "marked.md:6: not run, needs hardware (an RDMA NIC)" in out.stdout
    assert "marked.md:12: not run, needs outside-tests (it would run the tests themselves)" in out.stdout
    assert "marked.md:18: not run here, needs root" in out.stdout
    assert "marked.md:24: not run here, needs root" in out.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="--privileged runs the root commands: needs root")
def test_privileged_runs_the_root_commands_without_sudo_and_fails_on_them():
    out = run("marked.md", "--privileged")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAIL tests/docs/data/marked.md:18: exit status 1: false" in out.stderr
    assert "FAIL tests/docs/data/marked.md:24: exit status 1: false" in out.stderr
    assert "marked.md:6:" not in out.stderr  # hardware stays unrun


def test_a_page_runs_in_order_in_one_directory_with_its_own_store():
    out = run("in-order.md")
    assert out.returncode == 0, out.stdout + out.stderr
    ran = [line.split(":")[1] for line in out.stdout.splitlines() if " s  " in line]
    # the continued run, runs show, bare `rocelab`, the console's two `$ ` commands, the
    # text block's `$ ` line, the Python block; the yaml block is not run
    assert ran == ["6", "8", "9", "13", "15", "22", "26"], out.stdout


def test_extract_joins_continuations_and_here_documents():
    page = run_doc_commands.extract(DATA / "in-order.md")
    assert page.errors == []
    texts = [c.text for c in page.commands]
    assert texts[0] == "build/rocelab run examples/incast-16to1.yaml --set seed=3"
    assert texts[4].startswith("/usr/bin/python3 - <<'PY'\nimport json\n") and texts[4].endswith("\nPY")
    assert [c.language for c in page.commands] == ["sh"] * 6 + ["python"]
