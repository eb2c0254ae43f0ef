#!/usr/bin/env python3
"""Checks that no class and no function in the given source folders is longer than the limits.

    scripts/check-room-sizes.py [--max-class 300] [--max-function 80] [--top N] FOLDER...

Spans are measured by Universal Ctags (the `universal-ctags` package): from the line a class,
struct or function starts to the line its body ends, both counted, comments and blank lines
included. A class's span is its body (members defined inside it); members defined out of line
are functions of their own. Prints every offender with file:line and exits 1 if there is one;
--top N also lists the N longest of each kind.
"""
import argparse
import json
import shutil
import subprocess
import sys


def spans(folders):
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+neKZ", "--languages=C++", "-R", *folders],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        kind = tag.get("kind")
        if kind not in ("class", "struct", "function") or "end" not in tag:
            continue
        scope = tag.get("scope", "")
        # Anonymous namespaces show as __anon...: leave them out of the name.
        scope = "::".join(p for p in scope.split("::") if not p.startswith("__anon"))
        name = f"{scope}::{tag['name']}" if scope else tag["name"]
        yield ("function" if kind == "function" else "class", name, tag["path"], tag["line"],
               tag["end"] - tag["line"] + 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--max-class", type=int, default=300)
    parser.add_argument("--max-function", type=int, default=80)
    parser.add_argument("--top", type=int, default=0)
    args = parser.parse_args()
    if shutil.which("ctags") is None:
        sys.exit("check-room-sizes: ctags not found (scripts/install-deps.sh installs universal-ctags)")
    found = sorted(spans(args.folders), key=lambda s: -s[4])
    limits = {"class": args.max_class, "function": args.max_function}
    offenders = [s for s in found if s[4] > limits[s[0]]]
    for kind in ("class", "function"):
        for _, name, path, line, length in [s for s in found if s[0] == kind][:args.top]:
            print(f"{length:5d}  {kind:8s} {name}  ({path}:{line})")
    for kind, name, path, line, length in offenders:
        print(f"{path}:{line}: {kind} {name} is {length} lines, over {limits[kind]}",
              file=sys.stderr)
    print(f"check-room-sizes: {len(found)} classes and functions in {' '.join(args.folders)}, "
          f"{len(offenders)} over the limits (class {args.max_class}, function "
          f"{args.max_function} lines)")
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())
