#!/usr/bin/env python3
"""Checks that every function a document names, with its file, exists in that file.

    scripts/check-doc-walk.py docs/architecture.md

A name is written as `Class::function` or `function` in backquotes, followed by its file in
backquotes and parentheses: `ResultPath::onResult` (`daemon/pipeline/result_path.cpp`). Each is
looked up with Universal Ctags in that file (functions and prototypes, any namespace). Exits 1
naming each one that is not there, so the document's walk cannot drift from the code.
"""
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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if shutil.which("ctags") is None:
        sys.exit("check-doc-walk: ctags not found (scripts/install-deps.sh installs universal-ctags)")
    doc = pathlib.Path(sys.argv[1])
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
    for m in missing:
        print(m, file=sys.stderr)
    print(f"check-doc-walk: {len(pairs)} named functions in {doc}, {len(missing)} not found")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
