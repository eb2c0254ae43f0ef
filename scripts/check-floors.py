#!/usr/bin/env python3
"""Checks that the tree's folders are floors: a file includes only files of its own folder and of
the floors below it.

    scripts/check-floors.py TREE --floors base settings ... commands . \
        [--inside capture=picture,frame,v4l2+ffmpeg,camera] \
        [--door foundation/error.h=daemon/base/error.h] [--graph]

Below everything is foundation/ (errors, YAML reading, background work), which includes nothing
of detector/ or daemon/; then detector/, which includes nothing of daemon/; then daemon/'s
folders, bottom up as --floors lists them (VIGIL_DAEMON_FLOORS in daemon/CMakeLists.txt; "." is
the files at daemon/'s root). --inside gives a folder's own floors, bottom up: its files live in
those sub-folders, a sub-folder includes its own and the ones below, and sub-folders joined by
"+" stand side by side and include neither the other. --door names the one daemon/ file through
which daemon/ includes a file of foundation/: any other daemon/ file that includes it directly
is a problem.

Includes are read as the compiler reads them: quoted ones against the including file's folder,
then the tree; <daemon/...>, <detector/...> and <foundation/...> against the tree, the project's
root being a public include directory. Each problem is printed as path:line with why, and makes
the exit status 1. --graph also prints the arrows between daemon/'s folders (how many includes
each), which have no cycle when the check passes.
"""
import argparse
import collections
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<((?:daemon|detector|foundation)/[^>]+)>)')
LIBRARIES = ("foundation", "detector", "daemon")  # bottom up


def resolve(tree, including, quoted, angled):
    bases = (os.path.dirname(including), tree) if quoted else (tree,)
    for base in bases:
        path = os.path.normpath(os.path.join(base, quoted or angled))
        if os.path.exists(path):
            return path
    return None


def sources(root):
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if name.endswith((".h", ".cpp")):
                yield os.path.join(folder, name)


def includes(tree, path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            match = INCLUDE.match(line)
            if match:
                target = resolve(tree, path, match.group(1), match.group(2))
                if target:
                    yield number, target


class Floors:
    """Where a file stands: its library, its daemon/ folder, and inside that its sub-floor."""

    def __init__(self, tree, floors, inside):
        self.tree = tree
        self.level = {name: level for level, name in enumerate(floors)}
        self.inside = {}
        for spec in inside:
            folder, _, rooms = spec.partition("=")
            self.inside[folder] = {room: level for level, group in enumerate(rooms.split(","))
                                   for room in group.split("+")}

    def parts(self, path):
        rel = os.path.relpath(path, self.tree).split(os.sep)
        library = rel[0] if rel[0] in LIBRARIES else None
        folder = rel[1] if library == "daemon" and len(rel) > 2 else "."
        room = rel[2] if folder in self.inside and len(rel) > 3 else "."
        return library, folder, room

    def where_wrong(self, path):
        """Why the file stands on no floor, or None."""
        library, folder, room = self.parts(path)
        if library != "daemon":
            return None
        if folder not in self.level:
            return f"folder daemon/{folder} is not one of the floors ({' '.join(self.level)})"
        if folder in self.inside and room not in self.inside[folder]:
            return (f"daemon/{folder}'s files stand in its floors "
                    f"({' '.join(self.inside[folder])}), not in daemon/{folder}/{room}")
        return None

    def climb(self, path, target):
        """Why including target from path climbs, or None."""
        (lib, folder, room), (tlib, tfolder, troom) = self.parts(path), self.parts(target)
        shown = os.path.relpath(target, self.tree)
        if tlib is None:
            return None
        if LIBRARIES.index(tlib) > LIBRARIES.index(lib):
            return f"{lib}/ includes {shown}: {lib}/ stands below {tlib}/ and never includes it"
        if lib != "daemon" or tlib != "daemon":
            return None
        if tfolder != folder:
            if tfolder not in self.level or self.level[tfolder] > self.level[folder]:
                return (f"includes {shown}: daemon/{folder} may include only the floors below "
                        f"it, and daemon/{tfolder} is above it")
            return None
        floors = self.inside.get(folder)
        if floors and troom != room and troom in floors and room in floors:
            if floors[troom] > floors[room]:
                return (f"includes {shown}: daemon/{folder}/{room} may include only "
                        f"daemon/{folder}'s floors below it, and {troom}/ is above it")
            if floors[troom] == floors[room]:
                return (f"includes {shown}: daemon/{folder}/{room} and {troom}/ stand side by "
                        "side and include neither the other")
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floors", nargs="+", required=True)
    parser.add_argument("--inside", nargs="*", default=[], metavar="FOLDER=ROOMS")
    parser.add_argument("--door", nargs="*", default=[], metavar="FOUNDATION_FILE=DAEMON_FILE")
    parser.add_argument("--graph", action="store_true")
    parser.add_argument("tree")
    args = parser.parse_args()
    tree = os.path.abspath(args.tree)
    floors = Floors(tree, args.floors, args.inside)
    doors = {os.path.join(tree, a): os.path.join(tree, b)
             for a, _, b in (d.partition("=") for d in args.door)}
    problems, arrows, through = [], collections.Counter(), collections.Counter()
    for library in LIBRARIES:
        for path in sources(os.path.join(tree, library)):
            rel = os.path.relpath(path, tree)
            wrong = floors.where_wrong(path)
            if wrong:
                problems.append(f"{rel}:1: {wrong}")
                continue
            for number, target in includes(tree, path):
                why = floors.climb(path, target)
                if why:
                    problems.append(f"{rel}:{number}: {why}")
                if library == "daemon" and target in doors:
                    through[target] += 1
                    if path != doors[target]:
                        problems.append(
                            f"{rel}:{number}: includes {os.path.relpath(target, tree)}: daemon/ "
                            f"reaches it through {os.path.relpath(doors[target], tree)}")
                (_, here, _), (tlib, there, _) = floors.parts(path), floors.parts(target)
                if library == tlib == "daemon" and here != there:
                    arrows[(here, there)] += 1
    if args.graph:
        for (here, there), count in sorted(arrows.items(),
                                           key=lambda a: (floors.level.get(a[0][0], 99), a[0])):
            print(f"  {here:>9} -> {there:<9} {count:3d} includes")
    for problem in problems:
        print(problem, file=sys.stderr)
    doors_said = ", ".join(f"{os.path.relpath(d, tree)} by {through[d]} daemon/ file(s)"
                           for d in doors)
    print(f"check-floors: {len(arrows)} arrows between daemon/'s folders, {len(problems)} "
          f"problems (floors bottom up: foundation detector {' '.join(args.floors)})"
          + (f"; included {doors_said}" if doors else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
