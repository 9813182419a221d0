"""Starting an engine process: a new session, a death signal, exec's own errors.

Every engine command starts here, one-shot or persistent. A missing binary is
named before a launcher can hide it; a command the OS refuses (too long, a NUL
byte) is CommandRejected, since only that query fails.
"""

from __future__ import annotations

import errno
import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence

from ..errors import CommandRejected, EngineUnavailable
from . import guardian, lifeline, reaper


def _check_executable(argv0: str, cwd: str | None, env: Mapping[str, str]) -> None:
    """Raise what exec would, before a launcher stands between bench and the engine.

    Behind the launcher a missing binary would be the launcher's exit status 127
    (one failed query each time) instead of the error that names the binary.
    """
    if os.sep in argv0:
        candidates = [os.path.join(cwd or os.getcwd(), argv0)]
    else:
        candidates = [os.path.join(d, argv0) for d in os.get_exec_path(dict(env))]
    files = [c for c in candidates if os.path.isfile(c)]
    if not files:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv0)
    if not any(os.access(c, os.X_OK) for c in files):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), argv0)


def _death_signal(per_query: bool) -> tuple[bool, list[str], Callable[[], None] | None]:
    """How the child gets its death signal: (watched, launcher argv prefix, preexec_fn).

    A command run once per query is watched by the guardian (guardian.py): no
    cost in the child, from any thread. Where there is none it uses the cheap
    launcher, setpriv. Anything else gets die_with, a preexec_fn, which also
    catches a bench that died between fork and exec -- a persistent engine,
    started once, always does.

    PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, not
    the process. bench spawns from the caller's thread, which in bench is the
    main thread, alive as long as bench; a worker thread may end while its
    engine is still in use, so its children go without a death signal (the
    group and subreaper sweeps still cover them while bench runs). That is why
    `compare --jobs N` runs its cells in worker processes, not threads
    (run/jobs.py): each spawns from its own main thread.
    """
    if per_query and guardian.ready():
        return True, [], None
    if threading.current_thread() is not threading.main_thread():
        return False, [], None
    launcher = lifeline.death_launcher() if per_query else []
    return False, launcher, None if launcher else lifeline.die_with(os.getpid())


def _nul_in(argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> str:
    if any("\0" in a for a in argv):
        return "an argument"
    if any("\0" in k or "\0" in v for k, v in env.items()):
        return "an environment variable"
    return "the working directory" if cwd and "\0" in cwd else "the command"


def spawn(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None,
          stdin: int, stdout: int, stderr: int, owner: str, requires: str | None,
          per_query: bool = False) -> subprocess.Popen[bytes]:
    """Popen in a new session, with a death signal.

    A missing or unusable binary is EngineUnavailable (the engine cannot run at
    all); a command the OS refuses as such -- too long, or with a NUL byte -- is
    CommandRejected, since it depends on the query and only that query fails.
    """
    if not argv:
        raise EngineUnavailable(f"{owner}: the command is empty")
    lifeline.become_subreaper()
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    watched, launcher, preexec = _death_signal(per_query)
    try:
        if launcher:
            _check_executable(argv[0], cwd, full_env)
        proc = subprocess.Popen(
            [*launcher, *argv], cwd=cwd, env=full_env, stdin=stdin, stdout=stdout,
            stderr=stderr, start_new_session=True, preexec_fn=preexec,
        )
    except FileNotFoundError as exc:
        missing = argv[0] if exc.filename in (None, argv[0]) else exc.filename
        if cwd and not os.path.isdir(cwd):
            raise EngineUnavailable(f"{owner}: working directory {cwd} does not exist") from None
        need = f"; it requires: {requires}" if requires else ""
        raise EngineUnavailable(
            f"{owner}: executable {missing!r} not found on PATH{need}"
        ) from None
    except PermissionError:
        raise EngineUnavailable(f"{owner}: {argv[0]!r} is not executable") from None
    except OSError as exc:
        if exc.errno == errno.E2BIG:
            size = sum(len(os.fsencode(a)) + 1 for a in argv)
            raise CommandRejected(f"{owner}: the OS refused the command: {exc.strerror} "
                                  f"({len(argv)} arguments, {size:,} bytes)") from None
        raise EngineUnavailable(f"{owner}: cannot start {argv[0]!r}: {exc}") from None
    except ValueError as exc:
        if "null byte" in str(exc):
            raise CommandRejected(f"{owner}: the OS refused the command: "
                                  f"{_nul_in(argv, full_env, cwd)} contains a NUL byte "
                                  f"({exc})") from None
        raise EngineUnavailable(f"{owner}: cannot start {argv[0]!r}: {exc}") from None
    except subprocess.SubprocessError as exc:
        raise EngineUnavailable(f"{owner}: cannot start {argv[0]!r}: {exc}") from None
    reaper.own(proc.pid)
    if watched:
        guardian.watch(proc.pid)
    return proc
