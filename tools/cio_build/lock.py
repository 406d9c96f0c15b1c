"""One run at a time per checkout: an flock on build/.lock, and its self-test.
"""

import os
import subprocess
import sys

from .common import BUILD, HOST, LOCK, ROOT, say


def build_lock(path=LOCK, wait=True, quiet=False):
    """Takes an exclusive flock on path and returns the open file (keep it: the lock lasts as long as
    the file is open, and the OS drops it when this process ends, however it ends). When another
    process holds it: waits, saying who (as that process wrote into the file), or with wait=False
    returns None at once. Python opens the file close-on-exec, so the tools this run starts never
    inherit the lock. Where there is no fcntl module, no lock (returns True)."""
    try:
        import fcntl
    except ImportError:
        return True
    os.makedirs(os.path.dirname(path), exist_ok=True)
    f = open(path, "a+")
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "another build.py run"
        if not wait:
            f.close()
            if not quiet:
                say(f"build.py: {os.path.relpath(path, ROOT)} is held by {holder}")
            return None
        say(f"build.py: waiting for {holder} to finish (it holds {os.path.relpath(path, ROOT)})")
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()} (build.py {' '.join(sys.argv[1:])})\n")
    f.flush()
    return f


def lock_checks(tally):
    """The lock: while this run holds build/.lock a second `build.py ... --no-wait` refuses; a process
    holding a lock that is interrupted (Ctrl-C) leaves it free."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "build.py"), "gen", "--check", "--no-wait"],
                       capture_output=True, text=True, timeout=120)
    ok = r.returncode != 0 and f"pid {os.getpid()} " in r.stdout + r.stderr
    detail = None if ok else f"a second run did not refuse (exit {r.returncode}): {(r.stdout + r.stderr)[-1500:]}"
    if ok:
        import signal
        path = os.path.join(BUILD, "checks", "lock-selftest")
        # The child restores Python's own Ctrl-C handler: a shell starts background jobs (`cmd &`)
        # with SIGINT ignored, and that is inherited.
        script = ("import signal, sys, time; signal.signal(signal.SIGINT, signal.default_int_handler); "
                  "from tools.cio_build.lock import build_lock; "
                  "f = build_lock(sys.argv[1]); print('held', flush=True); time.sleep(120)")
        child = subprocess.Popen([sys.executable, "-c", script, path], stdout=subprocess.PIPE, cwd=ROOT,
                                 stderr=subprocess.DEVNULL, text=True)
        try:
            held = child.stdout.readline().strip() == "held"
            refused = held and build_lock(path, wait=False, quiet=True) is None
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                refused = False  # reported below: the interrupted holder did not go away
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        mine = build_lock(path, wait=False, quiet=True) if refused else None
        ok = held and refused and mine is not None
        detail = None if ok else f"held {held}, refused while held {refused}, free after Ctrl-C {mine is not None}"
        if mine is not None:
            mine.close()
    tally.add(HOST, "build lock", int(ok), int(not ok), 0, detail)
    say(f"  {'build.py':16} {'build lock':28} {'ok' if ok else 'FAILED: ' + detail}")
