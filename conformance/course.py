"""``schedcheck course-init DIR``: make a course repository answer the card's ``./check.sh p07``.

The card's acceptance step is ``./check.sh p07`` in a repository that holds the
student's ``mine/p07_scheduler.py``. This writes that ``check.sh``, and a starter
``mine/p07_scheduler.py`` (the interface, with every scheduling method still to write)
unless the student already has one; the script runs ``schedcheck check`` on the file and passes its
exit code through (0 conformant, 1 not, 2 nothing to check), so a course's CI can
gate on it as it is.
"""

from __future__ import annotations

import argparse
import stat
import sys
from pathlib import Path

from conformance.starter import starter_text

CHECK_SH = r"""#!/bin/sh
# ./check.sh PROBLEM [options]: check mine/<PROBLEM>_scheduler.py with schedcheck.
# Exit 0: conformant; 1: not conformant (the counterexample is printed); 2: nothing to check.
# Options after PROBLEM go to `schedcheck check` (e.g. --profile default, --trace-dir failures/).
set -u
problem="${1:-}"
[ $# -gt 0 ] && shift
cd "$(dirname "$0")" || exit 2
case "$problem" in
  p07) file=mine/p07_scheduler.py ;;
  "") echo "usage: ./check.sh p07 [schedcheck check options]" >&2; exit 2 ;;
  *) echo "check.sh: no checker for '$problem' here; this repository checks: p07" >&2; exit 2 ;;
esac
if [ ! -f "$file" ]; then
  echo "check.sh: $file not found; write your scheduler there (\`schedcheck api\` prints the interface)" >&2
  exit 2
fi
if command -v schedcheck >/dev/null 2>&1; then
  exec schedcheck check "$file" "$@"
fi
for python in python3 python; do
  if command -v "$python" >/dev/null 2>&1 && "$python" -c "import conformance.cli" 2>/dev/null; then
    exec "$python" -m conformance check "$file" "$@"
  fi
done
echo "check.sh: schedcheck is not installed; install it (python -m pip install <path to schedcheck>) and rerun" >&2
exit 2
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="the course repository (created if missing)")
    parser.add_argument("--force", action="store_true", help="replace an existing check.sh")


def main(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    script = root / "check.sh"
    if script.exists() and not args.force:
        print(f"schedcheck course-init: {script} already exists; pass --force to replace it", file=sys.stderr)
        return 2
    (root / "mine").mkdir(parents=True, exist_ok=True)
    script.write_text(CHECK_SH)
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    mine = root / "mine" / "p07_scheduler.py"
    if mine.exists():  # the student's own work is never replaced, not even with --force
        print(f"wrote {script}; kept {mine}. Run ./check.sh p07 in {root}")
        return 0
    mine.write_text(starter_text(), encoding="utf-8")
    print(f"wrote {script} and the starter {mine}: fill in the methods that raise NotImplementedError, then run "
          f"./check.sh p07 in {root} (`schedcheck api` prints the interface, `schedcheck rules` the rules)")
    return 0
