"""Fake engine that leaves grandchildren behind.

    sleeper.py PIDFILE [--ignore-term] [--exit]

Starts two grandchildren that sleep for an hour: one stays in this process
group, the other calls setsid to leave it. Their pids go to PIDFILE (one per
line, written atomically once both exist). Then this process sleeps forever,
or with --exit returns at once, orphaning them. --ignore-term makes all three
ignore SIGTERM, so only SIGKILL stops them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

pidfile = sys.argv[1]
ignore = "--ignore-term" in sys.argv
prelude = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " if ignore else ""
if ignore:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

same_group = subprocess.Popen([sys.executable, "-c", prelude + "import time; time.sleep(3600)"])
own_session = subprocess.Popen(
    [sys.executable, "-c", prelude + "import os, time; os.setsid(); time.sleep(3600)"]
)
time.sleep(0.2)  # let the second one reach setsid
with open(pidfile + ".tmp", "w") as f:
    f.write(f"{same_group.pid}\n{own_session.pid}\n")
os.replace(pidfile + ".tmp", pidfile)
print("ready", flush=True)
if "--exit" in sys.argv:
    sys.exit(0)
while True:
    time.sleep(3600)
