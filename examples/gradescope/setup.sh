#!/usr/bin/env bash
# Gradescope image setup: runs once, as root, when the autograder image is built.
#
# Installs schedcheck from /autograder/source/schedcheck into a venv at /opt/schedcheck, with every
# runtime dependency pinned by constraints.txt (made by lock.py), so the image is the same on every
# rebuild. Python: the image's own python3 when it is 3.11 or newer (Ubuntu 24.04: 3.12), installed from
# the release if the image has none; else Ubuntu's python3.11 package (22.04, whose python3 is 3.10: from
# the universe component and -updates, enabled if needed).
# Then the venv is made readable by root only: the grader runs as root and the sandboxed child runs
# as an unprivileged uid with the system interpreter (/usr/bin/python3.X), so the child can start
# Python but cannot read schedcheck, the corpus or the rubric.
set -euo pipefail
src=${AUTOGRADER_ROOT:-/autograder}/source
venv=${SCHEDCHECK_VENV:-/opt/schedcheck}  # overridable to try this script outside an image
export DEBIAN_FRONTEND=noninteractive

new_enough() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }

apt-get update -q
# setpriv (util-linux) lets the sandbox drop the child to an unprivileged uid; bubblewrap gives it
# namespaces where the container allows them (the sandbox uses the best level that works)
apt-get install -y -q util-linux
apt-get install -y -q bubblewrap || echo "setup.sh: bubblewrap is not available; the sandbox will use another level"

installable() { apt-get install -y -q --dry-run "$@" > /dev/null 2>&1; }
enable_universe() {
  # a minimal image has only `main`: python3-venv (24.04) and python3.11 (22.04) are in universe, and
  # python3.11's dependencies in -updates; enable both for the release, once
  local list=/etc/apt/sources.list.d/schedcheck-universe.list codename
  [ -f "$list" ] && return 0
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-jammy}")
  for suite in "$codename" "$codename-updates" "$codename-security"; do
    echo "deb http://archive.ubuntu.com/ubuntu $suite main universe"
  done > "$list"
  apt-get update -q
}
install() { installable "$@" || enable_universe; apt-get install -y -q "$@"; }

python=""
for candidate in /usr/bin/python3 /usr/bin/python3.13 /usr/bin/python3.12 /usr/bin/python3.11; do
  if [ -x "$candidate" ] && new_enough "$candidate"; then python=$candidate; break; fi
done
if [ -z "$python" ]; then
  # the release's own python3 when it is new enough (Ubuntu 24.04: 3.12), else python3.11 (22.04's is 3.10)
  candidate=$(apt-cache policy python3 | awk '/Candidate:/ {print $2}')
  if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && dpkg --compare-versions "$candidate" ge 3.11; then
    install python3 python3-venv
    python=/usr/bin/python3
  else
    install python3.11 python3.11-venv
    python=/usr/bin/python3.11
  fi
fi
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  install "python$version-venv"  # Debian and Ubuntu ship venv's pip apart
fi
echo "setup.sh: using $python (Python $version)"

rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check \
  -c "$src/constraints.txt" "$src/schedcheck"
"$venv/bin/python" -m pip check
"$venv/bin/schedcheck" --help > /dev/null

chown -R root:root "$venv" "$src"
chmod 0700 "$venv" "$src"
