# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Look for the grader's files and other students' work: the project, root-only files, the host's /tmp.

Expected: ok at the namespace levels (none of them exists in the child's root) and at every level
nothing root-only is readable; had anything been found, schedule() returns a list.
"""
import glob
import os

_found = []
for _path in ("/etc/shadow", "/root/.bash_history", "/work", "/home"):
    try:
        with open(_path, "rb") as _f:
            _f.read(1)
        _found.append(_path)
    except OSError:
        pass
_found += [p for p in glob.glob("/tmp/schedcheck-*/**/p07_scheduler.py", recursive=True)]
_found += [p for p in glob.glob("/tmp/*/subs/*") if os.access(p, os.R_OK)]
_root_only = [p for p in _found if p in ("/etc/shadow", "/root/.bash_history")]
if _root_only or (_found and os.path.isdir("/sandbox")):
    Scheduler.schedule = lambda self: [_found]
