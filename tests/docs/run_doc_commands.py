#!/usr/bin/python3
"""Runs every command shown in README.md and docs/*.md against the built tree.

What counts as a command:
- each line of a fenced block tagged sh, bash, shell or console (a `\\` at the end of a
  line continues the command; a here-document runs to its terminator; in a console block
  only the lines that start with `$ ` are commands, the rest is output);
- a line that starts with `$ ` in a text block;
- a fenced block tagged python or py, as a whole (one /usr/bin/python3 process per block,
  so each block imports what it uses).
Blocks tagged anything else (text, yaml, json, ...) are shown, not run. A fenced block
without a tag is an error: the page says which it is.

How a page runs: its commands in page order, in one fresh temporary directory that is
their working directory and HOME and holds `examples/` and `scripts/` (the repository's),
`build/rocelab`, `build/python` and `build/bench` (the built CLI, Python package and
benchmark tools); `rocelab` alone resolves to build/rocelab. So the runs a page creates
are the runs it later shows (`rocelab runs show 1`), in the store `rocelab.db` of that
directory. Python blocks run with PYTHONPATH=build/python (shell
commands get no PYTHONPATH: the pages say where the module is), everything with
MPLBACKEND=Agg. Each command has --timeout seconds (default 300); a background job (`&`)
is ended with the page; with --privileged a virtual lab the page leaves up (its soft
switch runs --binary) fails it and is taken down.

Markers: an HTML comment on the line before a fenced block says what its commands need
where the test runs.
  <!-- needs: root -->                  every command of the block needs root (namespaces,
                                        the virtual lab), or a root command before it.
  <!-- needs: hardware (WHAT) -->       WHAT (an RDMA NIC, a SONiC switch, a mirror port,
                                        ...) is not on this machine: never run here.
  <!-- needs: outside-tests (WHY) -->   cannot run inside a test (WHY: e.g. it runs this
                                        test suite itself).
A command that starts with `sudo` needs root without a marker. With --privileged (as root:
the `lab` tests) a page that has root commands runs whole, `sudo ` dropped, since its root
commands follow from its unprivileged ones; without it (the `unit` tests) the root
commands are skipped and listed. A command ends with a `# hardware` comment, for the
reader, exactly when its block is marked hardware.

Fails (exit 1), naming the file and line, on a command that fails or times out, a block
without a tag, an unknown marker, a marker not right before a block, a never-run marker
without its reason, or a
`# hardware` comment where the block is not marked hardware or the other way round.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHELL_LANGUAGES = {"sh", "bash", "shell", "console", "shell-session"}
PYTHON_LANGUAGES = {"python", "py"}
NEVER_RUN = {"hardware", "outside-tests"}
MARKER = re.compile(r"^<!--\s*needs:\s*(?P<kind>[a-z-]+)\s*(?:\((?P<reason>[^)]*)\))?\s*-->$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<info>[^`\s]*)")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)\1")


@dataclasses.dataclass
class Command:
    path: pathlib.Path  # the page
    line: int           # 1-based line of the command (or of a python block's first line)
    language: str       # "sh" or "python"
    text: str
    needs: str | None = None   # None, "root", "hardware", "outside-tests"
    reason: str = ""

    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclasses.dataclass
class Page:
    path: pathlib.Path
    commands: list[Command]
    errors: list[str]


def _shell_commands(lines: list[tuple[int, str]], console: bool) -> tuple[list[tuple[int, str]], list[str]]:
    """Commands of a shell block: (line, text) with continuations and here-documents joined."""
    commands: list[tuple[int, str]] = []
    errors: list[str] = []
    i = 0
    while i < len(lines):
        number, text = lines[i]
        i += 1
        stripped = text.strip()
        if console:
            if not stripped.startswith("$ "):
                continue
            stripped = stripped[2:].strip()
        elif stripped.startswith("$ "):
            stripped = stripped[2:].strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = [stripped]
        while parts[-1].endswith("\\") and i < len(lines):
            parts[-1] = parts[-1][:-1].rstrip()
            continuation = lines[i][1].strip()
            if console and continuation.startswith("> "):
                continuation = continuation[2:]
            parts.append(continuation)
            i += 1
        command = " ".join(parts)
        heredoc = HEREDOC.search(command)
        if heredoc:
            body = []
            while i < len(lines) and lines[i][1].strip() != heredoc["word"]:
                body.append(lines[i][1])
                i += 1
            if i == len(lines):
                errors.append(f"line {number}: here-document without its terminator {heredoc['word']}")
            else:
                body.append(lines[i][1])
                i += 1
            command = command + "\n" + "\n".join(body)
        commands.append((number, command))
    return commands, errors


def extract(path: pathlib.Path, shown_as: pathlib.Path | None = None) -> Page:
    """Every command of one markdown page, in page order, with its marker."""
    shown = shown_as or path
    page = Page(shown, [], [])
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    previous, previous_line = "", 0  # the last non-blank line outside blocks, and its number
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            if lines[i].strip():
                if MARKER.match(previous):
                    page.errors.append(f"{shown}:{previous_line}: a marker must be the last line before "
                                       "its fenced block")
                previous, previous_line = lines[i].strip(), i + 1
            if lines[i].startswith("$ "):
                page.commands.append(Command(shown, i + 1, "sh", lines[i][2:].strip()))
            i += 1
            continue
        fence, language, start = match["fence"], match["info"].lower(), i + 1
        body: list[tuple[int, str]] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1  # the closing fence
        marker = MARKER.match(previous) if previous.startswith("<!--") else None
        needs, reason = None, ""
        if previous.startswith("<!--") and "needs" in previous:
            if not marker or marker["kind"] not in {"root", *NEVER_RUN}:
                page.errors.append(f"{shown}:{previous_line}: unknown marker {previous!r} "
                                   "(needs: root, hardware (WHAT) or outside-tests (WHY))")
            else:
                needs, reason = marker["kind"], (marker["reason"] or "").strip()
                if needs in NEVER_RUN and not reason:
                    page.errors.append(f"{shown}:{previous_line}: needs: {needs} without a reason in parentheses")
        previous = ""
        if not language:
            page.errors.append(f"{shown}:{start}: fenced block without a language: tag it sh (commands), "
                               "python, or text/yaml/... (shown, not run)")
            continue
        if language in PYTHON_LANGUAGES:
            source = "\n".join(text for _, text in body)
            page.commands.append(Command(shown, start + 1, "python", source, needs, reason))
            continue
        if language in SHELL_LANGUAGES:
            found, errors = _shell_commands(body, console=language in {"console", "shell-session"})
        else:
            found, errors = _shell_commands([(n, t) for n, t in body if t.startswith("$ ")], console=True)
        page.errors += [f"{shown}:{start}: {e}" for e in errors]
        for number, text in found:
            command = Command(shown, number, "sh", text, needs, reason)
            if needs is None and text.startswith("sudo "):
                command.needs = "root"
            says_hardware = re.search(r"#\s*hardware\b", text) is not None
            if says_hardware and needs != "hardware":
                page.errors.append(f"{command.where()}: says `# hardware` but its block is not marked "
                                   "<!-- needs: hardware (WHAT) -->")
            if needs == "hardware" and not says_hardware:
                page.errors.append(f"{command.where()}: in a hardware block but does not end with "
                                   "`# hardware` (the reader's marker)")
            page.commands.append(command)
    return page


def _prepare(directory: pathlib.Path, source: pathlib.Path, binary: pathlib.Path, python_dir: pathlib.Path,
             bench_dir: pathlib.Path | None) -> None:
    for name in ("examples", "scripts"):
        if (source / name).exists():
            (directory / name).symlink_to(source / name)
    build = directory / "build"
    build.mkdir()
    (build / "rocelab").symlink_to(binary)
    (build / "python").symlink_to(python_dir)
    if bench_dir:
        (build / "bench").symlink_to(bench_dir)


def _tail(path: pathlib.Path, count: int = 30) -> str:
    text = path.read_text(errors="replace").splitlines() if path.exists() else []
    return "\n".join("    | " + line for line in text[-count:])


def _labs(binary: pathlib.Path) -> set[str]:
    """The virtual labs up on this machine whose soft switch runs `binary`: those a page
    started (another build's labs, someone else's, are not ours to judge or take down)."""
    out = subprocess.run([str(binary), "lab", "status", "--all"], capture_output=True, text=True, timeout=60)
    ours = set()
    for name, body in re.findall(r"^lab (\S+):(.*?)(?=^lab |\Z)", out.stdout, re.MULTILINE | re.DOTALL):
        pid = re.search(r"switch pid\s+(\d+)", body)
        try:
            if pid and pathlib.Path(f"/proc/{pid[1]}/exe").resolve() == binary.resolve():
                ours.add(name)
        except OSError:
            pass
    return ours


def run_page(page: Page, args: argparse.Namespace) -> list[str]:
    """Runs a page's commands in order in one temporary directory; the failures, each named."""
    failures: list[str] = []
    privileged = args.privileged
    runnable = [c for c in page.commands if c.needs not in NEVER_RUN]
    if privileged and not any(c.needs == "root" for c in runnable):
        print(f"{page.path}: no root commands (the unit test runs this page)")
        return failures
    directory = pathlib.Path(tempfile.mkdtemp(prefix="rocelab-docs-"))
    groups: list[int] = []
    labs_before = _labs(args.binary) if privileged else set()
    try:
        _prepare(directory, args.source.resolve(), args.binary.resolve(), args.python_dir.resolve(),
                 args.bench_dir.resolve() if args.bench_dir else None)
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # the pages say where the module is
        env["PATH"] = f"{directory / 'build'}:{env.get('PATH', '')}"
        env["HOME"] = str(directory)  # what a page installs for its user stays in the directory
        env["MPLBACKEND"] = "Agg"
        python_env = dict(env, PYTHONPATH=str(directory / "build" / "python"))
        for index, command in enumerate(page.commands):
            if command.needs in NEVER_RUN:
                print(f"{command.where()}: not run, needs {command.needs} ({command.reason})")
                continue
            if command.needs == "root" and not privileged:
                print(f"{command.where()}: not run here, needs root (the lab test runs it)")
                continue
            text = command.text
            if privileged and text.startswith("sudo "):
                text = text[len("sudo "):]
            if command.language == "python":
                script = directory / f".block-{index}.py"
                script.write_text(text + "\n")
                argv = [args.python, str(script)]
            else:
                argv = ["/bin/bash", "-o", "pipefail", "-c", text]
            out, err = directory / f".out-{index}", directory / f".err-{index}"
            first_line = text.splitlines()[0] if text else ""
            started = time.monotonic()
            with open(out, "wb") as stdout, open(err, "wb") as stderr:
                process = subprocess.Popen(argv, cwd=directory, env=python_env if command.language == "python" else env,
                                           stdin=subprocess.DEVNULL,
                                           stdout=stdout, stderr=stderr, start_new_session=True)
                groups.append(process.pid)
                try:
                    status = process.wait(timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    status = None
            # Informational only (which commands make the page slow); never asserted.
            print(f"{command.where()}: {time.monotonic() - started:6.1f} s  {first_line[:110]}", flush=True)
            if status != 0:
                what = f"timed out after {args.timeout} s" if status is None else f"exit status {status}"
                failures.append(f"{command.where()}: {what}: {first_line}\n  stdout:\n{_tail(out)}\n"
                                f"  stderr:\n{_tail(err)}")
    finally:
        for group in groups:
            try:
                os.killpg(group, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if privileged:
            # A page brings its labs down itself; one left up (a command failed before its
            # `lab down`) is a failure, taken down here so the next page starts clean.
            for name in sorted(_labs(args.binary) - labs_before):
                failures.append(f"{page.path}: left virtual lab {name} up")
                subprocess.run([str(args.binary), "lab", "down", "--name", name], capture_output=True, timeout=120)
        if args.keep:
            print(f"{page.path}: kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=pathlib.Path,
                        help="markdown pages (default: README.md and docs/*.md of --source)")
    parser.add_argument("--source", type=pathlib.Path, required=True, help="the repository root")
    parser.add_argument("--binary", type=pathlib.Path, required=True, help="the built rocelab CLI")
    parser.add_argument("--python-dir", type=pathlib.Path, required=True, help="build/python")
    parser.add_argument("--bench-dir", type=pathlib.Path, help="build/bench (bench_make_capture)")
    parser.add_argument("--python", default="/usr/bin/python3")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per command")
    parser.add_argument("--privileged", action="store_true",
                        help="run the pages with root commands (as root), not the others")
    parser.add_argument("--list", action="store_true", help="print the commands and markers; run nothing")
    parser.add_argument("--keep", action="store_true", help="keep each page's directory")
    args = parser.parse_args()
    if args.privileged and os.geteuid() != 0:
        print("--privileged needs root (namespaces, the virtual lab)", file=sys.stderr)
        return 2
    pages = args.pages or [args.source / "README.md", *sorted((args.source / "docs").glob("*.md"))]
    problems: list[str] = []
    for path in pages:
        shown = path.resolve().relative_to(args.source.resolve()) if path.resolve().is_relative_to(
            args.source.resolve()) else path
        page = extract(path, shown)
        problems += page.errors
        if args.list:
            for c in page.commands:
                print(f"{c.where()}: [{c.language}{', needs ' + c.needs if c.needs else ''}] {c.text.splitlines()[0] if c.text else ''}")
            continue
        if page.errors:
            continue
        problems += run_page(page, args)
    for problem in problems:
        print("FAIL " + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
