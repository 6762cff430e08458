#!/usr/bin/env bash
# nano-vllm's real scheduler against the suite (docs/engines.md, "nano-vllm").
#
#   bash tests/external/nanovllm.sh          # or, once sourced by tests/external/run.sh: run_nanovllm
#
# Clones nano-vllm at the commit conformance/engines/nanovllm.py was checked at into
# ${SCHEDCHECK_NANOVLLM:-$HOME/.cache/schedcheck/nano-vllm} when that folder holds no checkout (an existing
# checkout is used as it is), installs what the adapter needs (numpy, xxhash: no torch, no transformers)
# and runs the external tests. SCHEDCHECK_NANOVLLM_REPO overrides where it clones from.

NANOVLLM_COMMIT=bb823b3e06983d71485a8e1f23715ebd87d98ef8

run_nanovllm() {
    local dir="${SCHEDCHECK_NANOVLLM:-$HOME/.cache/schedcheck/nano-vllm}"
    local repo="${SCHEDCHECK_NANOVLLM_REPO:-https://github.com/GeeeekExplorer/nano-vllm}"
    if [ ! -f "$dir/nanovllm/engine/scheduler.py" ]; then
        mkdir -p "$(dirname "$dir")" || return 1
        git clone --quiet "$repo" "$dir" || return 1
        git -C "$dir" -c advice.detachedHead=false checkout --quiet "$NANOVLLM_COMMIT" || return 1
    fi
    local head
    head="$(git -C "$dir" rev-parse HEAD 2>/dev/null || echo unknown)"
    if [ "$head" != "$NANOVLLM_COMMIT" ]; then
        echo "note: $dir is at $head, the adapter was checked at $NANOVLLM_COMMIT" >&2
    fi
    python -m pip install --quiet numpy xxhash || return 1
    SCHEDCHECK_NANOVLLM="$dir" python -m pytest -q -m external tests/external/test_nanovllm.py
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
    case "${1:-nanovllm}" in
        nanovllm) run_nanovllm ;;
        *) echo "usage: $0 [nanovllm]" >&2; exit 2 ;;
    esac
fi
