"""Checks every #include "rocelab/..." of the source tree against the table of allowed
edges in docs/architecture.md (section "Allowed edges"), the one place the folder graph is
written down.

Each table row is a component: a name, the path prefixes of its files (sources, private
headers and public headers) and the components it may include. A file belongs to the
component with the longest matching prefix, so an adapter target (captures/src/dpdk/)
is a component of its own beside its folder's core. An include is resolved to the header
it names (under some <folder>/include/ directory) and is allowed when both files are in
the same component or the table lists the edge. Tests, benchmarks and fuzz targets
(tests/, bench/) may include anything; they are not part of the graph.

The adapters below do I/O (sockets, AF_PACKET, processes) beside a pure core; the table
must give each a component of its own, or the check fails, so no edit of the table folds
one back into its core and lets the core include it unseen.

    /usr/bin/python3 check_layering.py ROOT    exit 0, or 1 listing each forbidden include
"""

import pathlib
import re
import sys

from source_tree import NOT_CHECKED, run, source_files

INCLUDE = re.compile(r'^\s*#\s*include\s+"(rocelab/[^"]+)"', re.M)
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cc", ".in"}
# Adapter folder -> the core component of the folder it sits in.
ADAPTERS = {
    "fabric/soft_switch/": "fabric",
    "fabric/src/drivers/": "fabric",
    "traffic/src/soft_nic/": "traffic",
}


def read_table(doc):
    """{component: (prefixes, allowed components)} from the "Allowed edges" table."""
    text = doc.read_text()
    start = text.find("## Allowed edges")
    if start < 0:
        raise SystemExit(f"{doc}: no '## Allowed edges' section")
    components = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        name = cells[0].strip("`")
        prefixes = re.findall(r"`([^`]+)`", cells[1])
        allowed = set(re.findall(r"`([^`]+)`", cells[2]))
        if not prefixes:
            raise SystemExit(f"{doc}: component {name} lists no files")
        components[name] = (prefixes, allowed)
    if not components:
        raise SystemExit(f"{doc}: the Allowed edges table has no rows")
    for name, (_, allowed) in components.items():
        unknown = allowed - components.keys()
        if unknown:
            raise SystemExit(f"{doc}: component {name} may include unknown components {sorted(unknown)}")
    return components


def owner(path, components):
    best, best_len = None, -1
    for name, (prefixes, _) in components.items():
        for p in prefixes:
            if path.startswith(p) and len(p) > best_len:
                best, best_len = name, len(p)
    return best


def adapter_problems(components):
    """The adapters the table leaves inside their core component (or in none)."""
    problems = []
    for folder, core in ADAPTERS.items():
        mine = owner(folder + "any.cpp", components)
        if mine is None or mine == core:
            problems.append(f"docs/architecture.md: adapter {folder} is not a component of its own "
                            f"(its files belong to {mine or 'no component'})")
    return problems


def check(root):
    root = pathlib.Path(root)
    components = read_table(root / "docs" / "architecture.md")
    include_dirs = sorted(p for p in root.glob("**/include") if p.is_dir() and not
                          str(p.relative_to(root)).startswith(NOT_CHECKED))
    problems = adapter_problems(components)
    for rel, f in source_files(root, SOURCE_SUFFIXES):
        mine = owner(rel, components)
        for number, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            header = next((d / m.group(1) for d in include_dirs if (d / m.group(1)).is_file()), None)
            if header is None:
                problems.append(f"{rel}:{number}: includes {m.group(1)}, which no include/ directory has")
                continue
            theirs = owner(str(header.relative_to(root)), components)
            if mine is None:
                problems.append(f"{rel}: belongs to no component of docs/architecture.md")
                break
            if theirs is None:
                problems.append(f"{header.relative_to(root)}: belongs to no component of docs/architecture.md")
                continue
            if theirs != mine and theirs not in components[mine][1]:
                problems.append(f"{rel}:{number}: {mine} -> {theirs} ({m.group(1)}) is not an allowed edge")
    return sorted(set(problems))


def main(argv):
    return run(argv, __doc__, check, lambda n: f"layering: {n} include(s) against docs/architecture.md")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
