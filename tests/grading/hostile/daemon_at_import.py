"""At import, leave a daemon in its own session (argv 'sleep 913.5'), then schedule correctly.

Expected: ok, and the daemon gone once the run ends normally (no timeout involved).
"""
import os

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "913.5"])
    os._exit(0)
os.wait()
