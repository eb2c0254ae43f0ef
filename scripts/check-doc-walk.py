#!/usr/bin/env python3
"""Checks that every function a document names, with its file, exists in that file, and that
its walks go one way up daemon/'s floors.

    scripts/check-doc-walk.py docs/architecture.md [--floors base settings ... commands .]

A name is written as `Class::function` or `function` in backquotes, followed by its file in
backquotes and parentheses: `ResultPath::onResult` (`daemon/events/result_path.cpp`). Each is
looked up with Universal Ctags in that file (functions and prototypes, any namespace). Exits 1
naming each one that is not there: a function renamed, moved or deleted fails the check.

What it checks is the text against the code's names, not the code's calls: that each named
function exists where the text says, and that the order the text gives goes one way up the
floors. It does not check that those functions call each other in that order (a call through
an interface or an asio::post is not in the caller's body); that part of the walk is the
document's word, kept true by reading it when the code changes.

With --floors (daemon/'s folders bottom up; detector/ is below them all), every section whose
heading starts with "## The walk" is a walk: its numbered steps name who holds the frame or the
result, in the order the code runs, and a step's "- uses" bullets name what that holder calls
on the floors below it (pixels asked of a picture, the detector library), which return to it.
The holders' floors may never go down (a walk that climbs back up fails), and a use may not be
above its holder. Prints, per walk, its room changes (consecutive names in different files,
uses included) and its climbs (0 when it passes).
"""
import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys

NAMED = re.compile(r"`([A-Za-z_][A-Za-z0-9_:~]*)`\s*\(`([^`]+)`\)")


def defined(path):
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+nKZ", "--kinds-C++=+p", "--languages=C++",
         "--language-force=C++", "-o", "-", str(path)],
        check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("kind") not in ("function", "prototype"):
            continue
        scope = [p for p in tag.get("scope", "").split("::") if p and not p.startswith("__anon")]
        parts = scope + [tag["name"]]
        # Every qualified tail: run, Camera::run, vigil::Camera::run.
        for i in range(len(parts)):
            names.add("::".join(parts[i:]))
    return names


STEP = re.compile(r"^\d+\.\s")
USES = re.compile(r"^\s+- uses\b")
HEADING = re.compile(r"^#+\s")


def walks(text):
    """{walk heading: [(kind, name, path)]}, kind "step" or "use", in the document's order."""
    found, current, blocks = {}, None, []
    for line in text.splitlines() + ["## end"]:
        if HEADING.match(line):
            if current:
                found[current] = [(kind, name, path) for kind, block in blocks
                                  for name, path in NAMED.findall(block)]
            current = line.strip("# ") if line.startswith("## The walk") else None
            blocks = []
            continue
        if current is None:
            continue
        if STEP.match(line) or not blocks:
            blocks.append(["step", line])
        elif USES.match(line):
            blocks.append(["use", line])
        elif not line.strip() or not line.startswith(" "):
            blocks.append(["step", line])  # a paragraph between steps
        else:
            blocks[-1][1] += "\n" + line  # a step's or a use's next line
    return found


def floor_of(path, floors):
    """The floor of a file: daemon/'s folders by --floors, detector/ below them (-1), foundation/
    below the detector (-2)."""
    parts = pathlib.PurePosixPath(path).parts
    if parts[0] in ("foundation", "detector"):
        return -2 if parts[0] == "foundation" else -1
    folder = parts[1] if len(parts) > 2 else "."
    return floors.index(folder) if folder in floors else None


def check_walk(heading, names, floors):
    """Problems of one walk, and its line of figures."""
    problems, changes, climbs, returns = [], 0, 0, 0
    holder = None  # (floor, name) of the step now holding the frame
    previous_path, previous_floor, highest = None, None, None
    for kind, name, path in names:
        floor = floor_of(path, floors)
        if floor is None:
            problems.append(f"{heading}: `{name}` ({path}) is on no floor")
            continue
        if previous_path is not None and path != previous_path:
            changes += 1
        # Counted as a plain sequence, uses included: a move up to a floor already reached.
        if previous_floor is not None and previous_floor < floor <= highest:
            returns += 1
        highest = floor if highest is None else max(highest, floor)
        previous_path, previous_floor = path, floor
        if kind == "use":
            if holder and floor > holder[0]:
                climbs += 1
                problems.append(f"{heading}: `{name}` ({path}) is used by `{holder[1]}` from "
                                f"the floor below it")
            continue
        if holder and floor < holder[0]:
            climbs += 1
            problems.append(f"{heading}: `{name}` ({path}) holds the frame after `{holder[1]}`, "
                            f"a floor above it: the walk climbs back up")
        holder = (floor, name)
    return problems, (f"{heading}: {len(names)} names, {changes} room changes, {climbs} climbs "
                      f"({returns} moves back up to a floor already reached if the uses counted as "
                      f"steps: returns from calls down)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("doc")
    parser.add_argument("--floors", nargs="+")
    args = parser.parse_args()
    if shutil.which("ctags") is None:
        sys.exit("check-doc-walk: ctags not found (scripts/install-deps.sh --tests installs universal-ctags)")
    doc = pathlib.Path(args.doc)
    root = doc.resolve().parent.parent
    pairs = NAMED.findall(doc.read_text())
    if not pairs:
        sys.exit(f"check-doc-walk: {doc} names no function with its file")
    cache = {}
    missing = []
    for name, path in pairs:
        file = root / path
        if not file.is_file():
            missing.append(f"{doc}: `{name}`: no file {path}")
            continue
        if path not in cache:
            cache[path] = defined(file)
        if name not in cache[path]:
            missing.append(f"{doc}: `{name}` is not defined in {path}")
    if args.floors:
        found = walks(doc.read_text())
        if not found:
            missing.append(f"{doc}: no section headed '## The walk ...'")
        for heading, names in found.items():
            problems, figures = check_walk(heading, names, args.floors)
            missing.extend(f"{doc}: {p}" for p in problems)
            print(f"check-doc-walk: {figures}")
    for m in missing:
        print(m, file=sys.stderr)
    print(f"check-doc-walk: {len(pairs)} named functions in {doc}, {len(missing)} problems")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
