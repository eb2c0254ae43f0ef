#!/usr/bin/env python3
"""Checks that the project's scripts keep their Python in modules of a readable size.

    scripts/check-script-sizes.py [--max-function 80] [--max-inline 15] FOLDER...

In every .py file under the folders, a function (or method) may span at most --max-function
lines, decorators not counted (ast's spans). In every .sh file, Python given inline (a heredoc
read by `python3 -`, or a `python3 -c` string spanning lines) may be at most --max-inline lines:
more goes into a module of scripts/lib/ that the script runs. Prints every offender as
path:line and exits 1 if there is one.
"""
import argparse
import ast
import os
import re
import sys

HEREDOC = re.compile(r"python3?\b[^<]*\s-\s.*<<-?\s*['\"]?(\w+)['\"]?")
INLINE = re.compile(r"python3?\b.*\s-c\s+(['\"])(.*)$")


def files(folders, suffix):
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in sorted(names):
                if name.endswith(suffix):
                    yield os.path.join(root, name)


def long_functions(path, limit):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                yield node.lineno, f"function {node.name} is {length} lines, over {limit}"


def inline_python(lines):
    """(line, length) of each piece of inline Python in a shell script's lines."""
    i = 0
    while i < len(lines):
        heredoc, inline = HEREDOC.search(lines[i]), INLINE.search(lines[i])
        if heredoc:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == heredoc[1]),
                       len(lines))
            yield i + 1, end - i - 1
            i = end
        elif inline and inline[1] not in inline[2]:  # the string goes on to later lines
            end = next((j for j in range(i + 1, len(lines)) if inline[1] in lines[j]), len(lines))
            yield i + 1, end - i + 1
            i = end
        i += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--max-function", type=int, default=80)
    parser.add_argument("--max-inline", type=int, default=15)
    args = parser.parse_args()
    problems, checked = [], 0
    for path in files(args.folders, ".py"):
        checked += 1
        problems += [f"{path}:{line}: {what}" for line, what in long_functions(path, args.max_function)]
    for path in files(args.folders, ".sh"):
        checked += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        problems += [f"{path}:{line}: {length} lines of inline Python, over {args.max_inline}: "
                     f"a module of scripts/lib/ instead"
                     for line, length in inline_python(lines) if length > args.max_inline]
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"check-script-sizes: {checked} Python and shell files in {' '.join(args.folders)}, "
          f"{len(problems)} over the limits (function {args.max_function} lines, inline Python "
          f"{args.max_inline})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
