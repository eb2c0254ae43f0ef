#!/usr/bin/env python3
"""Lists the tests a ctest run skipped, each with its reason, from ctest's JUnit file
(ctest --output-junit). With --allowed FILE, a skip not named in FILE fails (exit 1): that is
how CI refuses a run in which a missing part (../shared, the model, a broker, Prometheus,
Chromium, ONNX Runtime, the VM's kernel) turned tests into skips. The allowed skips are printed
too, so a CI log shows what it let pass.

  scripts/check-skips.py build/ctest-junit.xml [--allowed tests/allowed-skips.txt]

FILE: one test name a line as ctest names it, without the "  # GetParam() = ..." GoogleTest
adds to a parameterized test's; '#' starts a comment. Tests disabled in the source (DISABLED_,
helpers another test runs) are listed but are no skips.
Exit 0 when every skip is allowed (or without --allowed), 1 otherwise, 2 when the JUnit file is
missing or unreadable."""

import argparse
import re
import sys
import xml.etree.ElementTree as ET

# The line that says why, as each kind of test prints it: GoogleTest's "file:line: Skipped" is
# followed by the message; scripts print "SKIP: ..." (or "SKIP vm-journey: ..."); Python's
# unittest prints "... skipped 'reason'".
GTEST_SKIPPED = re.compile(r":\d+: Skipped$")
SCRIPT_SKIP = re.compile(r"^SKIP[ :].*")
PYTHON_SKIP = re.compile(r"skipped '(.*)'")


def reason_of(output):
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if GTEST_SKIPPED.search(line):
            rest = [l for l in lines[i + 1:] if not l.startswith("[  SKIPPED ]")]
            return rest[0].strip() if rest else "(no message)"
        if SCRIPT_SKIP.match(line):
            return line.strip()
        m = PYTHON_SKIP.search(line)
        if m:
            return m.group(1)
    return "(no reason printed)"


def test_name(case):
    """ctest's name without the comment GoogleTest adds to a parameterized test's
    ("Suite.Test/npu  # GetParam() = "npu"")."""
    return case.get("name").split("  # ", 1)[0]


def skipped_tests(junit):
    """(skips, disabled): (name, reason) of every test ctest skipped, and the names of those
    disabled in the source (GoogleTest's DISABLED_ prefix: helpers that another test runs), in
    file order."""
    skips, disabled = [], []
    for case in ET.parse(junit).getroot().iter("testcase"):
        status = case.get("status")
        if status in ("run", "fail"):
            continue
        if status == "disabled":
            disabled.append(test_name(case))
            continue
        out = case.find("system-out")
        skips.append((test_name(case), reason_of(out.text if out is not None and out.text else "")))
    return skips, disabled


def read_allowed(path):
    allowed = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            name = line.split("#", 1)[0].strip()
            if name:
                allowed.add(name)
    return allowed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("junit")
    parser.add_argument("--allowed", help="the skips that may happen (CI: tests/allowed-skips.txt)")
    args = parser.parse_args()
    try:
        skips, disabled = skipped_tests(args.junit)
    except (OSError, ET.ParseError) as e:
        print(f"check-skips: cannot read ctest's JUnit file {args.junit}: {e}", file=sys.stderr)
        return 2
    for name in disabled:
        print(f"disabled in the source (not a skip): {name}")
    if args.allowed is None:
        for name, reason in skips:
            print(f"skipped: {name}: {reason}")
        print(f"check-skips: {len(skips)} test(s) skipped")
        return 0
    allowed = read_allowed(args.allowed)
    refused = [(n, r) for n, r in skips if n not in allowed]
    for name, reason in skips:
        if name in allowed:
            print(f"allowed skip ({args.allowed}): {name}: {reason}")
    for name, reason in refused:
        print(f"REFUSED SKIP: {name}: {reason}")
    print(f"check-skips: {len(skips)} test(s) skipped, {len(skips) - len(refused)} allowed by "
          f"{args.allowed}, {len(refused)} refused")
    if refused:
        print("check-skips: a skip in CI means a part this machine provides is missing (the reason "
              "above names it); only tests that need hardware no machine here has may skip",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
