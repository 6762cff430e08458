#!/usr/bin/env bash
# Gradescope image setup (runs once, as root, when the autograder is built).
# The autograder zip holds this folder's two files plus the schedcheck source tree
# under schedcheck/ (make it with `sh examples/gradescope/make_zip.sh`).
set -euo pipefail
apt-get update -q
apt-get install -y -q python3.11 python3.11-venv util-linux
python3.11 -m venv /opt/schedcheck
/opt/schedcheck/bin/pip install -q /autograder/source/schedcheck
