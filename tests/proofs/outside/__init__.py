"""Bugs planted in spec/rules.py by an engineer who saw only docs/rules.md, docs/api.md and spec/, never the checks.

Each is one edit of spec/rules.py, stated as spec/faults.py states the catalog's. Five more of that
engineer's fourteen were the same edit as a fault already stated (``SAME``), so they stay there, once.
The first run found two that `prove --quick` missed: ``update_sorted_batch_order`` (its seq ids sorted
in arrival order, so the order of update() could not show) and the pending guard that an empty batch
slipped past (``protocol_pending_truthy`` in spec/faults.py); the validation stream and the model
checker now name requests so that their ids do not sort in arrival order, and the model checker checks
the protocol guards at every state.
"""

from spec.faults import Edit

SAME = {  # outside bug -> the fault of spec/faults.py that is the same edit
    "preempt_to_waiting_tail": "preempt_to_tail",
    "try_grow_rejects_exact_fill": "capacity_off_by_one",
    "phase2_full_off_by_one": "max_num_seqs_off_by_one",
    "phase2_reserve_whole_gap": "reserve_whole_prompt",
    "schedule_protocol_truthy": "protocol_pending_truthy",
}

OUTSIDE: dict[str, tuple[str, tuple[Edit, ...]]] = {  # name -> (what it gets wrong, its edits)
    "blocks_for_ceil_off_by_one": ("ceil written as (t + bs) // bs: one block too many at exact multiples", (
        Edit("    return -(-tokens // block_size)",
             "    return (tokens + block_size) // block_size"),)),
    "chunk_prefill_decode_split": ("a sequence with output counts as decoding: a recompute crawls 1 token a step", (
        Edit("    return min(seq.remaining, budget)",
             "    return min(seq.prompt_len - seq.num_computed, budget) if not seq.output else 1"),)),
    "phase1_chunk_uses_full_budget": ("phase 1 chunks by max_num_batched_tokens, not by the budget left", (
        Edit("        n = chunk(seq, budget)",
             "        n = chunk(seq, state.config.max_num_batched_tokens)"),)),
    "phase1_spend_budget_before_fit": ("the chunk is charged before it fits: a self-preempted sequence spends it", (
        Edit("        n = chunk(seq, budget)\n        while (grown",
             "        n = chunk(seq, budget)\n        budget -= n\n        while (grown"),
        Edit("            batch += ((seq.seq_id, n),)\n            budget -= n\n",
             "            batch += ((seq.seq_id, n),)\n"))),
    "phase2_status_not_running": ("an admitted sequence moves to running but keeps status WAITING", (
        Edit("        head = replace(head, status=Status.RUNNING)\n",
             "        head = replace(head)\n"),)),
    "finish_keeps_num_blocks": ("a finished sequence keeps its num_blocks (blocks_used is credited)", (
        Edit("    done = replace(seq, num_blocks=0, status=Status.FINISHED)",
             "    done = replace(seq, status=Status.FINISHED)"),)),
    "apply_one_eos_zero_falsy": ("`if eos and token == eos`: an eos of 0 never finishes a sequence", (
        Edit("    if (eos is not None and token == eos) or len(seq.output) >= seq.max_tokens:",
             "    if (eos and token == eos) or len(seq.output) >= seq.max_tokens:"),)),
    "update_sorted_batch_order": ("update() applies the batch in sorted seq_id order, not batch order", (
        Edit("    for seq_id, n in state.pending:",
             "    for seq_id, n in sorted(state.pending):"),)),
    "check_request_rejects_exact_fit": ("add() refuses a request whose peak needs exactly num_blocks", (
        Edit("    if need > config.num_blocks:",
             "    if need >= config.num_blocks:"),)),
}
