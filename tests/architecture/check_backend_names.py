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

import re
import sys

from source_tree import run, source_files

REGISTRY = (
    "experiments/include/rocelab/experiments/run/backend_traits.hpp",
    "experiments/include/rocelab/experiments/run/backend.hpp",
    "experiments/src/run/backend.cpp",
)
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc"}
BACKEND_THEN_LITERAL = re.compile(r'\bbackend[\w.()>-]*\s*[!=]=\s*"')
LITERAL_THEN_BACKEND = re.compile(r'"\s*[!=]=\s*[\w.()>-]*\bbackend\b')


def check(root):
    problems = []
    for rel, f in source_files(root, SOURCE_SUFFIXES):
        if rel in REGISTRY:
            continue
        for number, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if line.lstrip().startswith("//"):
                continue
            if BACKEND_THEN_LITERAL.search(line) or LITERAL_THEN_BACKEND.search(line):
                problems.append(f"{rel}:{number}: compares a backend's name with a string; ask "
                                f"backend_traits_of(name) (experiments/run/backend_traits.hpp)")
    return problems


def main(argv):
    return run(argv, __doc__, check, lambda n: f"backend names: {n} comparison(s) outside the registry")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
