"""Instances alive at once, stated once: the workload of the two-instance probe's second instance, and the step
before which each scheduler of a group (or pair) but the first is created.

`check` (conformance/checks/history.py ``other_workload``) and the sandbox child of `grade` both derive
it from the first workload's JSON with this function: the child receives no second workload in its job
(docs/sandbox.md, "A probe cannot be seen before it starts"), so it computes the same one itself, and the
parent validates the second instance's trace against its own copy. Standard library only: in the
sandbox it is part of the child's driver (conformance/sandbox/spawn.py).
"""

from __future__ import annotations

from typing import Any

OTHER_BASE = 5000  # the second instance's tokens: base + this, so mixed-up sequences show in the outputs


def beside_workload(workload: dict[str, Any]) -> dict[str, Any]:
    """The same requests and ids under a config that differs in every field, in workload JSON.

    The block size grows by one and the cache is the tightest that holds its largest request (one
    block more when that equals the first's), so a borrowed block_size or num_blocks shows; the
    budget and max_num_seqs grow by one and every token by OTHER_BASE, so borrowed sequences show.
    """
    config = workload["config"]
    size = config["block_size"] + 1
    peak = max((-(-(r["prompt_len"] + r["max_tokens"] - 1) // size) for r in workload["requests"]), default=0)
    sample = workload["sample"]
    return {**workload,
            "config": {**config, "num_blocks": peak if peak != config["num_blocks"] else peak + 1, "block_size": size,
                       "max_num_seqs": config["max_num_seqs"] + 1,
                       "max_num_batched_tokens": config["max_num_batched_tokens"] + 1},
            "sample": {"base": {k: b + OTHER_BASE for k, b in sample["base"].items()},
                       "eos_at": sample.get("eos_at", {})}}


def created_at(workload: dict[str, Any]) -> int:
    """The step before which a scheduler of a group or pair, not the first, is created: that of its first request.
    A scheduler made while others run meets their queues with whatever its __init__ resets in shared state."""
    return min((r["arrival"] for r in workload["requests"]), default=1)
