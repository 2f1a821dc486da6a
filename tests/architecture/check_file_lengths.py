"""Checks that no C++ source or header of the libraries, the CLI and the bindings is longer
than 800 lines: a file that long holds more than one job, and is split by concern into
files of the same library (STYLE.md, "small files with one job").

Every C++ file outside tests/, bench/, docs/, examples/, scripts/ and build directories is
checked; nothing else is exempt.

    /usr/bin/python3 check_file_lengths.py ROOT    exit 0, or 1 listing each longer file
"""

import pathlib
import sys

MAX_LINES = 800
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}
NOT_CHECKED = ("tests/", "bench/", "build", "docs/", "examples/", "scripts/")


def check(root, max_lines=MAX_LINES):
    root = pathlib.Path(root)
    problems = []
    for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES):
        rel = f.relative_to(root).as_posix()
        if rel.startswith(NOT_CHECKED) or any(part.startswith(".") for part in f.relative_to(root).parts):
            continue
        lines = len(f.read_text(errors="replace").splitlines())
        if lines > max_lines:
            problems.append(f"{rel}: {lines} lines, more than {max_lines}; split it by concern")
    return problems


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"file lengths: {len(problems)} file(s) over {MAX_LINES} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
