"""Bugs planted in spec/rules.py by an engineer who saw only docs/rules.md, docs/api.md and spec/, never the checks.

Each is one edit of spec/rules.py, stated as spec/faults.py states the catalog's. Five more of that
engineer's fourteen were the same edit as a fault already stated (``SAME``), so they stay there, once.
The first run found two that `prove --quick` missed: ``update_sorted_batch_order`` (its seq ids sorted
in arrival order, so the order of update() could not show) and the pending guard that an empty batch
slipped past (``protocol_pending_truthy`` in spec/faults.py); the validation stream and the model
checker now name requests so that their ids do not sort in arrival order, and the model checker checks
the protocol guards at every state.

A second engineer, in the same way, planted seventeen and ran eleven. `prove --quick` missed four: three
of add()'s input guards (an id of a finished request taken again, which the default tests missed too; a
prompt_len of 0; a bool accepted as an int) and one that changes only the reasons of a decision, not the
decision (left to the tests of spec.explain). The model checker now checks add()'s guards at every
state (``add_accepts_*`` and ``add_refuses_a_full_cache`` in spec/faults.py break it). One more was
caught by the model checker alone, not by the validation (phase 2 admitting past max_num_seqs): the
validation stream now holds a step that fills max_num_seqs by admissions. And the stream no longer
fails when the spec refuses a feasible request: it compares that workload first.
"""

from spec.faults import Edit

SAME = {  # outside bug -> the fault of spec/faults.py that is the same edit
    "preempt_to_waiting_tail": "preempt_to_tail",
    "try_grow_rejects_exact_fill": "capacity_off_by_one",
    "phase2_full_off_by_one": "max_num_seqs_off_by_one",
    "phase2_reserve_whole_gap": "reserve_whole_prompt",
    "schedule_protocol_truthy": "protocol_pending_truthy",
    "check_request_rejects_exact_fit": "add_refuses_a_full_cache",
    # the second engineer's
    "dup_after_finish_ok": "add_accepts_finished_id",  # passed prove --quick and the default tests
    "check_len_zero_ok": "add_accepts_empty",
    "bool_len_ok": "add_accepts_bool",
    "p2_full_gt": "max_num_seqs_off_by_one",
    "preempt_tail": "preempt_to_tail",
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
    # the second engineer's (17 planted, 11 run through prove --quick and the tests before the time ran out)
    "blocks_for_rounds_to_nearest": ("blocks_for rounds to the nearest block: wrong only for block_size >= 3", (
        Edit("    return -(-tokens // block_size)",
             "    return (tokens + block_size // 2) // block_size"),)),
    "check_request_peak_without_minus_one": ("the peak counts the last token, which is never appended", (
        Edit("    peak = prompt_len + max_tokens - 1",
             "    peak = prompt_len + max_tokens"),)),
    "phase2_full_counts_running_before_the_step": ("phase 2 admits up to max_num_seqs more, not up to it", (
        Edit("if len(state.running) >= state.config.max_num_seqs:",
             "if len(state.running) - len(batch) >= state.config.max_num_seqs:"),)),
}
