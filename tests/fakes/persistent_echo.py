"""Fake persistent engine: one JSON request per stdin line, one JSON line back.

The answer echoes the request: {"hits": [{"path": "echo.py", "start": 1,
"end": 1, "text": <query>}], "request": <request>, "pid": <pid>}.

A query containing CRASH exits 3 without answering, HANG never answers,
PARTIAL writes half a line and exits. Flags:
    --never-answer        read requests, answer none
    --chatty              write a lot to stderr for every request
    --starts FILE         append a line to FILE each time the engine starts
"""

from __future__ import annotations

import json
import os
import sys
import time

args = sys.argv[1:]
if "--starts" in args:
    with open(args[args.index("--starts") + 1], "a") as f:
        f.write(f"{os.getpid()}\n")

for line in sys.stdin:
    request = json.loads(line)
    query = str(request.get("query", ""))
    if "--chatty" in args:
        for i in range(2000):
            print(f"debug {i}: " + "." * 100, file=sys.stderr)
    if "--never-answer" in args or "HANG" in query:
        time.sleep(3600)
    if "CRASH" in query:
        print("persistent_echo: crashing as asked", file=sys.stderr, flush=True)
        sys.exit(3)
    if "PARTIAL" in query:
        sys.stdout.write('{"hits": [{"path": "half')
        sys.stdout.flush()
        sys.exit(0)
    hit = {"path": "echo.py", "start": 1, "end": 1, "text": query}
    print(json.dumps({"hits": [hit], "request": request, "pid": os.getpid()}), flush=True)
