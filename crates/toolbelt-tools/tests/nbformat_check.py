#!/usr/bin/env python3
"""Checks notebooks with the official `nbformat` library (used by the NotebookEdit tests).

usage: nbformat_check.py [--canonical] FILE...

Each FILE is read with nbformat (as version 4) and validated against the nbformat JSON
schema; any warning nbformat raises while doing so (a missing or duplicate cell id, a
schema problem it would repair) counts as a failure. With --canonical the file must also be
byte-identical to what nbformat itself writes for the same notebook, i.e. what Jupyter
would save.

Exit status: 0 every file passed, 1 a file failed (reasons on stderr), 3 nbformat is not
installed (`pip install nbformat`).
"""

import difflib
import sys
import warnings

try:
    import nbformat
except ImportError:
    print("nbformat is not installed; install it with `pip install nbformat`", file=sys.stderr)
    sys.exit(3)


def check(path, canonical):
    # A byte-order mark is tolerated here (the edit keeps one when the file has it).
    with open(path, encoding="utf-8-sig") as f:
        text = f.read()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    if canonical:
        # nbformat.write() ends the file with a newline after writes().
        written = nbformat.writes(nb) + "\n"
        if written != text:
            diff = difflib.unified_diff(
                text.splitlines(True), written.splitlines(True), "file", "as nbformat writes it"
            )
            raise ValueError("the file differs from what nbformat writes:\n" + "".join(diff))


def main(argv):
    canonical = "--canonical" in argv
    files = [a for a in argv if a != "--canonical"]
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    status = 0
    for path in files:
        try:
            check(path, canonical)
        except Exception as e:  # report every file's problem, then fail
            print(f"{path}: {type(e).__name__}: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
