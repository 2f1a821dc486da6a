"""Checks that no C++ source or header of the libraries, the CLI and the bindings is longer
than 800 lines: a file that long holds more than one job, and is split by concern into
files of the same library (STYLE.md, "small files with one job").

Every C++ file outside tests/, bench/, docs/, examples/, scripts/ and build directories is
checked; nothing else is exempt.

    /usr/bin/python3 check_file_lengths.py ROOT    exit 0, or 1 listing each longer file
"""

import sys

from source_tree import run, source_files

MAX_LINES = 800
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}


def check(root, max_lines=MAX_LINES):
    problems = []
    for rel, f in source_files(root, SOURCE_SUFFIXES, skip_hidden=True):
        lines = len(f.read_text(errors="replace").splitlines())
        if lines > max_lines:
            problems.append(f"{rel}: {lines} lines, more than {max_lines}; split it by concern")
    return problems


def main(argv):
    return run(argv, __doc__, check, lambda n: f"file lengths: {n} file(s) over {MAX_LINES} lines")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
