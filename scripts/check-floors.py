#!/usr/bin/env python3
"""Checks that daemon/'s folders are floors: a file includes only files of its own folder and of
the floors below it, and detector/ includes nothing of daemon/.

    scripts/check-floors.py TREE --floors base settings ... commands . [--graph]

--floors: daemon/'s folders bottom up, as daemon/CMakeLists.txt declares them
(VIGIL_DAEMON_FLOORS; "." is the files at daemon/'s root). An include is resolved as the compiler
does (against the including file's folder, then the tree); one that climbs (names a floor above
its file's), a file in a folder the list does not name, and an include of daemon/ from detector/
are each printed as path:line and make the exit status 1. --graph also prints the arrows between
folders (how many includes each), which have no cycle when the check passes.
"""
import argparse
import collections
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def resolve(tree, including, target):
    for base in (os.path.dirname(including), tree):
        path = os.path.normpath(os.path.join(base, target))
        if os.path.exists(path):
            return path
    return None


def folder_of(daemon, path):
    rel = os.path.relpath(path, daemon)
    return rel.split(os.sep)[0] if os.sep in rel else "."


def sources(root):
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            if name.endswith((".h", ".cpp")):
                yield os.path.join(folder, name)


def includes(tree, path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            match = INCLUDE.match(line)
            if match:
                target = resolve(tree, path, match.group(1))
                if target:
                    yield number, target


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floors", nargs="+", required=True)
    parser.add_argument("--graph", action="store_true")
    parser.add_argument("tree")
    args = parser.parse_args()
    tree = os.path.abspath(args.tree)
    daemon = os.path.join(tree, "daemon")
    floor = {name: level for level, name in enumerate(args.floors)}
    problems, arrows = [], collections.Counter()
    for path in sources(daemon):
        rel = os.path.relpath(path, tree)
        here = folder_of(daemon, path)
        if here not in floor:
            problems.append(f"{rel}:1: folder daemon/{here} is not one of the floors "
                            f"({' '.join(args.floors)})")
            continue
        for number, target in includes(tree, path):
            if not target.startswith(daemon + os.sep):
                continue
            there = folder_of(daemon, target)
            if there == here:
                continue
            arrows[(here, there)] += 1
            if there not in floor or floor[there] > floor[here]:
                problems.append(f"{rel}:{number}: includes {os.path.relpath(target, tree)}: "
                                f"daemon/{here} may include only the floors below it, and "
                                f"daemon/{there} is above it")
    for path in sources(os.path.join(tree, "detector")):
        for number, target in includes(tree, path):
            if target.startswith(daemon + os.sep):
                problems.append(f"{os.path.relpath(path, tree)}:{number}: detector/ includes "
                                f"{os.path.relpath(target, tree)}: the detector never includes "
                                "the daemon")
    if args.graph:
        for (here, there), count in sorted(arrows.items(), key=lambda a: (floor.get(a[0][0], 99), a[0])):
            print(f"  {here:>9} -> {there:<9} {count:3d} includes")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"check-floors: {len(arrows)} arrows between daemon/'s folders, {len(problems)} "
          f"climbing (floors bottom up: {' '.join(args.floors)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
