"""What the architecture checks share: the source files of the libraries, the CLI and the
bindings (every folder but the ones outside the graph), and the command line that runs a
check and reports what it found.

Tests, benchmarks, build directories, docs, examples and scripts are not the graph's: they
may include, compare and grow as they need.
"""

import pathlib
import sys

NOT_CHECKED = ("tests/", "bench/", "build", "docs/", "examples/", "scripts/")


def source_files(root, suffixes, skip_hidden=False):
    """(path relative to root in posix form, path) of each file with one of `suffixes`
    outside NOT_CHECKED, sorted; with skip_hidden, none under a directory whose name starts
    with a dot."""
    root = pathlib.Path(root)
    for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in suffixes):
        parts = f.relative_to(root).parts
        rel = "/".join(parts)
        if rel.startswith(NOT_CHECKED) or (skip_hidden and any(part.startswith(".") for part in parts)):
            continue
        yield rel, f


def run(argv, usage, check, summary):
    """`check(ROOT)` from the command line (argv: the script and ROOT): each problem on
    stdout, then `summary(count)` on stderr; exit 0 clean, 1 with problems, 2 for usage."""
    if len(argv) != 2:
        print(usage.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(summary(len(problems)), file=sys.stderr)
        return 1
    return 0
