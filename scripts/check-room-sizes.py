#!/usr/bin/env python3
"""Checks that no class, function or file in the given source folders is longer than the limits.

    scripts/check-room-sizes.py [--max-class 250] [--max-function 60] [--max-file 600] [--top N]
                                FOLDER...

Spans are measured by Universal Ctags (the `universal-ctags` package): from the line a class,
struct or function starts to the line its body ends, both counted, comments and blank lines
included. A class counts whole: its body (members defined inside it) plus every member defined
out of line, in whichever file (a class spread over several files is still one room). A file
counts its lines. Prints every offender with file:line and exits 1 if there is one; --top N also
lists the N longest of each kind.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys


def unnamed(scope):
    """The scope without anonymous namespaces (ctags' __anon...)."""
    return "::".join(p for p in scope.split("::") if not p.startswith("__anon"))


def tags(folders):
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+neKZ", "--languages=C++", "-R", *folders],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("kind") in ("class", "struct", "function") and "end" in tag:
            scope = unnamed(tag.get("scope", ""))
            tag["qualified"] = f"{scope}::{tag['name']}" if scope else tag["name"]
            tag["scope"] = scope
            yield tag


def spans(folders):
    """(kind, name, path, line, length) of every function, whole class and file."""
    found = list(tags(folders))
    classes = {t["qualified"]: t for t in found if t["kind"] != "function"}
    outside = dict.fromkeys(classes, 0)  # lines of members defined out of the body
    for t in found:
        if t["kind"] != "function":
            continue
        yield ("function", t["qualified"], t["path"], t["line"], t["end"] - t["line"] + 1)
        owner = classes.get(t["scope"])
        if owner and not (owner["path"] == t["path"] and owner["line"] <= t["line"] <= owner["end"]):
            outside[t["scope"]] += t["end"] - t["line"] + 1
    for name, c in classes.items():
        yield ("class", name, c["path"], c["line"], c["end"] - c["line"] + 1 + outside[name])
    for folder in folders:
        for root, _, files in os.walk(folder):
            for f in sorted(files):
                if f.endswith((".h", ".cpp")):
                    path = os.path.join(root, f)
                    with open(path, encoding="utf-8", errors="replace") as text:
                        yield ("file", path, path, 1, sum(1 for _ in text))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--max-class", type=int, default=250)
    parser.add_argument("--max-function", type=int, default=60)
    parser.add_argument("--max-file", type=int, default=600)
    parser.add_argument("--top", type=int, default=0)
    args = parser.parse_args()
    if shutil.which("ctags") is None:
        sys.exit("check-room-sizes: ctags not found (scripts/install-deps.sh --tests installs universal-ctags)")
    found = sorted(spans(args.folders), key=lambda s: -s[4])
    limits = {"class": args.max_class, "function": args.max_function, "file": args.max_file}
    offenders = [s for s in found if s[4] > limits[s[0]]]
    for kind in ("class", "function", "file"):
        for _, name, path, line, length in [s for s in found if s[0] == kind][:args.top]:
            print(f"{length:5d}  {kind:8s} {name}  ({path}:{line})")
    for kind, name, path, line, length in offenders:
        print(f"{path}:{line}: {kind} {name} is {length} lines, over {limits[kind]}",
              file=sys.stderr)
    print(f"check-room-sizes: {len(found)} classes, functions and files in "
          f"{' '.join(args.folders)}, {len(offenders)} over the limits (class {args.max_class} "
          f"lines whole, function {args.max_function}, file {args.max_file})")
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())
