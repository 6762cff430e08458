#!/usr/bin/env bash
# Gradescope image setup: runs once, as root, when the autograder image is built.
#
# Installs schedcheck from /autograder/source/schedcheck into a venv at /opt/schedcheck, with every
# runtime dependency pinned by constraints.txt (made by lock.py), so the image is the same on every
# rebuild. Python: the image's own python3 when it is 3.11 or newer (Ubuntu 24.04: 3.12), else
# Ubuntu's python3.11 package (22.04, from the universe component, which is enabled if needed).
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

python=""
for candidate in /usr/bin/python3 /usr/bin/python3.13 /usr/bin/python3.12 /usr/bin/python3.11; do
  if [ -x "$candidate" ] && new_enough "$candidate"; then python=$candidate; break; fi
done
if [ -z "$python" ]; then
  if ! apt-cache policy python3.11 | grep -q 'Candidate: [0-9]'; then
    # Ubuntu 22.04 images without the universe component: enable it for python3.11
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-jammy}")
    echo "deb http://archive.ubuntu.com/ubuntu $codename universe" > /etc/apt/sources.list.d/schedcheck-universe.list
    echo "deb http://archive.ubuntu.com/ubuntu $codename-updates universe" >> /etc/apt/sources.list.d/schedcheck-universe.list
    apt-get update -q
  fi
  apt-get install -y -q python3.11 python3.11-venv
  python=/usr/bin/python3.11
fi
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get install -y -q "python$version-venv"  # Debian and Ubuntu ship venv's pip apart
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
