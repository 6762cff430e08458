#!/usr/bin/env sh
# Build the Gradescope autograder zip from a checkout.
#
#   sh examples/gradescope/make_zip.sh [OUT.zip]     (default: autograder.zip at the checkout's top, ignored by git)
#
# At the zip's root: setup.sh, run_autograder, constraints.txt (the pinned runtime dependencies) and
# held_out_seed (the secret seed of the held-out cases; readable by root only once installed).
# Under schedcheck/: only what grading needs: pyproject.toml, README.md, spec/ and conformance/
# without the catalog's mutants, the developer tools and the course starter (its empty Scheduler would
# trip the check below), and without the pages. No reference solution, no impl/,
# no tests/ and no mutants are shipped: whatever is in the image, a submission might find a way to
# load, so the solutions are simply absent (diagnosis, which replays the mutants, is therefore off
# in the image). As a last check, any shipped file that defines a `class Scheduler` stops the build.
# The zip is rebuilt from scratch every time (an old one at OUT is replaced) and nothing is left behind.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top/autograder.zip}
case $out in
  /*) ;;
  *) out=$(pwd)/$out ;;
esac
case $out in
  *.zip) ;;
  *) echo "make_zip.sh: the output must end in .zip, got '$out'" >&2; exit 2 ;;
esac
if [ ! -d "$(dirname "$out")" ]; then
  echo "make_zip.sh: the folder of '$out' does not exist; create it first" >&2
  exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/schedcheck-zip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
mkdir "$tmp/root" "$tmp/root/schedcheck"
# the checkout's files (tracked, or new and not ignored) that grading needs; never the solutions
(cd "$top" && git ls-files -z --cached --others --exclude-standard -- pyproject.toml README.md spec conformance) |
  tr '\0' '\n' | grep -v -E '^conformance/(mutants|selfcheck|crosscheck|starter|docs)(/|$)|(^|/)__pycache__/|\.pyc$' |
  while IFS= read -r f; do if [ -f "$top/$f" ]; then echo "$f"; fi; done > "$tmp/files"
(cd "$top" && tar -cf - -T "$tmp/files") | tar -xf - -C "$tmp/root/schedcheck"
solutions=$(grep -rlE '^class Scheduler\b' "$tmp/root/schedcheck" || true)
if [ -n "$solutions" ]; then
  echo "make_zip.sh: these files define a Scheduler, a solution a submission could load; exclude them in" >&2
  echo "make_zip.sh (the grep -v line) or move them out of spec/ and conformance/:" >&2
  echo "$solutions" | sed "s|^$tmp/root/schedcheck/|  |" >&2
  exit 1
fi
cp "$here/setup.sh" "$here/run_autograder" "$here/constraints.txt" "$tmp/root/"
# the secret seed of the held-out cases (docs/grading.md): fresh for each zip unless given, so keep the zip
# private; pass SCHEDCHECK_HELD_OUT_SEED to rebuild an image that grades exactly as an earlier one
if [ -n "${SCHEDCHECK_HELD_OUT_SEED:-}" ]; then
  printf '%s\n' "$SCHEDCHECK_HELD_OUT_SEED" > "$tmp/root/held_out_seed"
else
  od -An -N16 -tu8 /dev/urandom | tr -s ' \n' ' ' | awk '{printf "%s%s\n", $1, $2}' > "$tmp/root/held_out_seed"
fi
chmod 0755 "$tmp/root/setup.sh" "$tmp/root/run_autograder"
if command -v zip > /dev/null; then
  (cd "$tmp/root" && zip -qrX "$tmp/autograder.zip" .)
else  # no zip tool: Python's zipfile writes the same archive
  (cd "$tmp/root" && python3 -m zipfile -c "$tmp/autograder.zip" setup.sh run_autograder constraints.txt held_out_seed \
    schedcheck)
fi
mv -f "$tmp/autograder.zip" "$out"
echo "wrote $out"
