#!/usr/bin/env sh
# Build the Gradescope autograder zip from a checkout: setup.sh and run_autograder at
# the root, the project under schedcheck/. Usage: sh examples/gradescope/make_zip.sh [OUT.zip]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/autograder.zip}
tmp=$(mktemp -d)
mkdir -p "$tmp/schedcheck"
(cd "$top" && git ls-files -z | xargs -0 -I{} cp --parents {} "$tmp/schedcheck/")
cp "$top/examples/gradescope/setup.sh" "$top/examples/gradescope/run_autograder" "$tmp/"
(cd "$tmp" && zip -qr "$out" .)
echo "wrote $out"
