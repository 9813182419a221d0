"""An engine that answers well but tampers with its state dir or the tree, for the hostile suite.

    tamper.py index ACTION STATE ROOT
    tamper.py search ACTION STATE ROOT QUERY

ACTION is `none` or `what:argument`:
    state-to-symlink:DIR   replace the state dir by a symlink to DIR
    state-to-file:_        replace the state dir by a regular file
    link-in-state:PATH     leave a symlink to PATH inside the state dir
    marker-link:PATH       make the index marker a symlink to PATH (bench writes it next)
    tree-append:REL        append a line to ROOT/REL
    tree-delete:REL        delete ROOT/REL
    tree-add:REL           create ROOT/REL
    tree-chmod:REL         make ROOT/REL executable
Answers point at pkg/config.py lines 4-7 (the mini corpus in the tests).
"""

from __future__ import annotations

import json
import os
import shutil
import sys

GOOD = {"hits": [{"path": "pkg/config.py", "start": 4, "end": 7, "text": "def load_settings"}]}


def tamper(action: str, state: str, root: str) -> None:
    if action == "none":
        return
    what, _, arg = action.partition(":")
    if what == "state-to-symlink":
        shutil.rmtree(state, ignore_errors=True)
        os.symlink(arg, state)
    elif what == "state-to-file":
        shutil.rmtree(state, ignore_errors=True)
        with open(state, "w") as fh:
            fh.write("not a folder\n")
    elif what == "link-in-state":
        os.symlink(arg, os.path.join(state, "escape"))
    elif what == "marker-link":
        os.symlink(arg, os.path.join(state, ".bench-index.json"))
    elif what == "tree-append":
        with open(os.path.join(root, arg), "a") as fh:
            fh.write("# the engine was here\n")
    elif what == "tree-delete":
        if os.path.lexists(os.path.join(root, arg)):  # a one-shot search runs once per query
            os.unlink(os.path.join(root, arg))
    elif what == "tree-add":
        with open(os.path.join(root, arg), "w") as fh:
            fh.write("planted = True\n")
    elif what == "tree-chmod":
        os.chmod(os.path.join(root, arg), 0o755)
    else:
        raise SystemExit(f"tamper.py: unknown action {action!r}")


def main() -> None:
    step, action, state, root = sys.argv[1:5]
    tamper(action, state, root)
    if step == "search":
        print(json.dumps(GOOD))


if __name__ == "__main__":
    main()
