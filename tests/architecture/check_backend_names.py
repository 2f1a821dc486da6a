"""Checks that no source file outside the backend registry compares a backend's name with
a string: callers ask the backend's traits (backend_traits_of(name).simulated, .kind, ...
in experiments/include/rocelab/experiments/run/backend_traits.hpp), so a new backend is
added in that one place and registered in a backend_registry (run/backend.hpp).

A comparison is `==` or `!=` between an expression that names a backend (`spec.backend`,
`records.backend`, `spec->backend`, `backend_name`, ...) and a string literal, either way
round. Comment lines are skipped. Tests, benchmarks and other folders outside the graph
(tests/, bench/, build*, docs/, examples/, scripts/) may compare names; they are not checked.

    /usr/bin/python3 check_backend_names.py ROOT    exit 0, or 1 listing each comparison
"""

import pathlib
import re
import sys

REGISTRY = (
    "experiments/include/rocelab/experiments/run/backend_traits.hpp",
    "experiments/include/rocelab/experiments/run/backend.hpp",
    "experiments/src/run/backend.cpp",
)
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc"}
NOT_CHECKED = ("tests/", "bench/", "build", "docs/", "examples/", "scripts/")
BACKEND_THEN_LITERAL = re.compile(r'\bbackend[\w.()>-]*\s*[!=]=\s*"')
LITERAL_THEN_BACKEND = re.compile(r'"\s*[!=]=\s*[\w.()>-]*\bbackend\b')


def check(root):
    root = pathlib.Path(root)
    problems = []
    for f in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES):
        rel = f.relative_to(root).as_posix()
        if rel.startswith(NOT_CHECKED) or rel in REGISTRY:
            continue
        for number, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if line.lstrip().startswith("//"):
                continue
            if BACKEND_THEN_LITERAL.search(line) or LITERAL_THEN_BACKEND.search(line):
                problems.append(f"{rel}:{number}: compares a backend's name with a string; ask "
                                f"backend_traits_of(name) (experiments/run/backend_traits.hpp)")
    return problems


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"backend names: {len(problems)} comparison(s) outside the registry", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
