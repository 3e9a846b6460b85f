#!/usr/bin/env python3
"""Prints one summary line for the test cases of JUnit XML reports that match a pattern:
`<label>: N passed, M failed` (", S skipped" when some were). Every language's test runner
writes this format (pytest --junitxml, Maven Surefire, node --test's junit reporter), so each
language's script prints its etcd line the same way.

    scripts/junit-summary.py LABEL PATTERN REPORT...

PATTERN is a substring of a test case's file, class name or name (e.g. `etcd`). Exits 1 when
no report exists, so a runner that wrote nothing is not read as "0 failed".
"""

import sys
import xml.etree.ElementTree as ET


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    label, pattern, reports = sys.argv[1], sys.argv[2].lower(), sys.argv[3:]
    passed = failed = skipped = 0
    read = 0
    for path in reports:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print(f"{label}: cannot read {path}: {e}", file=sys.stderr)
            continue
        read += 1
        for case in root.iter("testcase"):
            where = " ".join(case.get(k, "") for k in ("file", "classname", "name")).lower()
            if pattern not in where:
                continue
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
    if read == 0:
        print(f"{label}: no test report was written", file=sys.stderr)
        return 1
    line = f"{label}: {passed} passed, {failed} failed"
    print(line + (f", {skipped} skipped" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
