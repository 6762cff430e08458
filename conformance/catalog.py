"""The catalog of known bugs: the card's pitfall table (易错点) and more seen in real schedulers.

Each entry has a stable name, the symptom in the card's terms, and a hint that points at
the rule without giving the code. The bug itself is stated once, under the same name, as
edits: of spec/rules.py in spec/faults.py (a rule bug; the proofs run it) or of the built
submission in conformance/mutants/shapes.py (a shape of list-based code). The mutant
submissions (conformance/mutants/build.py), ``schedcheck prove --inject`` and grading's
diagnosis all follow from that statement; tests/mutants/test_mutants.py checks that each
entry has exactly one.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec.model import DEFAULT_POLICY, POLICIES, SETTING_TEXT, Policy, all_policies


@dataclass(frozen=True, slots=True)
class Bug:
    name: str
    source: str  # "card" (易错点 table) or where else it is seen
    symptom: str
    hint: str
    rules: tuple[str, ...]  # rule ids and invariants it breaks
    policy: Policy | None = None  # the policy (spec/model.py POLICIES) this bug is, when it is one


CATALOG: tuple[Bug, ...] = (
    # --- the card's pitfall table -------------------------------------------------------
    Bug("blocks_by_num_tokens", "card",
        "blocks are sized by num_tokens instead of num_computed + n: a chunked prefill takes its whole "
        "prompt's blocks early and preempts for nothing",
        "size the blocks for the tokens the sequence will hold after this step: num_computed + n", ("P1", "P2", "I1")),
    Bug("preempt_keeps_num_computed", "card",
        "num_computed is not reset on preemption: the sequence comes back with 1 token and no KV is recomputed",
        "preemption frees the KV, so num_computed must go back to 0", ("P1.preempt", "I3", "I4")),
    Bug("preempt_clears_output", "card",
        "output is cleared on preemption: the final output differs from a run without preemption",
        "preemption loses the cache, not the progress: keep output", ("I4", "OUT")),
    Bug("preempt_to_tail", "card",
        "the preempted sequence is pushed to the tail of waiting: it starves, and order breaks under pressure",
        "the victim arrived before everyone waiting: push it to the head (appendleft)", ("I5", "P1.preempt")),
    Bug("sample_during_prefill", "card",
        "sample_fn is called after an incomplete prefill chunk: extra tokens, max_tokens reached too early",
        "sample only when num_computed reaches num_tokens", ("U.sample", "I3")),
    Bug("phase2_continue", "card",
        "phase 2 skips a head that does not fit (continue) and admits a later one: example 3 schedules a3",
        "strict FCFS: when the head does not fit, stop admitting (break)", ("P2.stop",)),
    Bug("running_snapshot_loop", "card",
        "phase 1 iterates over a copy of running (a for loop): a sequence preempted earlier in the step is "
        "still scheduled",
        "walk running by index with while; preemption shortens the list", ("P1", "I6")),
    Bug("batch_not_copied", "card",
        "schedule() returns the dict update() reads: a caller that mutates it changes what update() does",
        "keep the batch in an instance field and return a copy", ("U.compute",)),
    Bug("eos_before_append", "card",
        "eos is checked before the token is appended: the eos token is missing from the output",
        "append the token first, then finish if it is eos or len(output) >= max_tokens", ("U.finish", "OUT")),
    # --- seen in real schedulers and in student code -----------------------------------
    Bug("no_admission_after_preemption", "vLLM v1",
        "phase 2 is skipped in any step that preempted: the victim is not retried in the same step",
        "after phase 1, always try the waiting head, preempted or not; if this is meant (vLLM v1 does it when "
        "its scheduler_reserve_full_isl is off), check under that policy: --policy vllm-v1:reserve_full_isl=false",
        ("P2",), policy=Policy("vllm-v1", (("reserve_full_isl", False),))),
    Bug("budget_not_shared", "student code",
        "phase 2 starts with a fresh budget: a step schedules more than max_num_batched_tokens",
        "one budget per step, shared by both phases", ("I2", "P2")),
    Bug("max_num_seqs_off_by_one", "student code",
        "admission allows len(running) == max_num_seqs before admitting: one sequence too many runs",
        "admit only while len(running) < max_num_seqs", ("P2.full", "I6")),
    Bug("victim_first", "student code",
        "the victim is running[0] (the oldest) instead of running[-1] (the latest)",
        "preempt the latest admitted: running[-1]", ("P1.preempt",)),
    Bug("decode_not_charged", "student code",
        "a decode step (n == 1) is not charged to the budget: the step overruns max_num_batched_tokens",
        "every scheduled token counts: budget -= n for decodes too", ("I2", "P1")),
    Bug("reserve_whole_prompt", "vLLM (scheduler_reserve_full_isl)",
        "admission reserves blocks for the whole sequence, not for the chunk: a head that would fit "
        "chunk by chunk is blocked",
        "size admission blocks by num_computed + n, as in phase 1", ("P2", "P2.stop", "I1")),
    Bug("grow_on_mod_one", "student code",
        "a block is added only when the token count crosses a block boundary by exactly one "
        "(len % block_size == 1): chunks that jump a boundary get too few blocks",
        "need = ceil((num_computed + n) / block_size) - num_blocks, which may be more than 1", ("I1",)),
    Bug("capacity_off_by_one", "student code",
        "a sequence fits only if blocks_used + need < num_blocks: the last free block is never used",
        "it fits when blocks_used + need <= num_blocks", ("P1.preempt", "P2.stop")),
    Bug("finish_keeps_blocks", "student code",
        "a finished sequence keeps its blocks: blocks leak and the queue eventually stalls",
        "on finish: blocks_used -= seq.num_blocks; seq.num_blocks = 0", ("U.finish", "I1")),
    Bug("preempt_keeps_blocks_used", "student code",
        "preemption resets the victim's num_blocks but not blocks_used: the cache looks fuller than it is",
        "free the victim's blocks in both counters", ("P1.preempt", "I1")),
    Bug("max_tokens_off_by_one", "student code",
        "a sequence finishes only when len(output) > max_tokens: one token too many",
        "finish when len(output) >= max_tokens", ("U.finish", "OUT")),
    Bug("no_chunked_prefill", "nano-vllm (pre-chunking)",
        "a waiting head whose remaining prompt exceeds the budget is not admitted at all",
        "n = min(remaining, budget): admit the head with a chunk", ("P2", "P2.stop")),
    Bug("prefill_or_decode", "nano-vllm; vLLM v0's default scheduler",
        "a step either admits waiting sequences or runs the running ones, never both: the running sequences "
        "wait while anyone is admitted, and a step that runs them admits nobody, not even its own victim",
        "each step runs phase 1 over running, then phase 2 with what is left of the budget: decodes and "
        "admissions share a step", ("P1", "P2")),
    Bug("chunk_only_first", "nano-vllm",
        "only the first sequence scheduled in a step may get a partial chunk: a waiting head whose remaining "
        "prompt exceeds what is left of the budget is not admitted once anyone else is scheduled",
        "n = min(remaining, budget) for every head, not only the first of the step: admit it with what is left",
        ("P2", "P2.stop")),
    Bug("skip_self_keeps_going", "student code",
        "after a sequence preempts itself, phase 1 goes on preempting the sequences before it",
        "when the victim is the sequence itself, stop retrying it", ("P1.skip_self",)),
)

BY_NAME = {bug.name: bug for bug in CATALOG}


def policy_bug(policy: Policy) -> Bug:
    """Following another policy, as a cause: the spec under that policy is its mutant."""
    said = "".join(f", with {k}={'true' if v else 'false'} ({SETTING_TEXT[k]})" for k, v in policy.settings)
    return Bug(f"policy:{policy}", "a policy of the spec",
               f"follows policy {policy.name}{said} ({POLICIES[policy.name]}) where the run judges by another one",
               f"if that policy is meant, check under it: --policy {policy}", ("P2", "P2.policy"), policy=policy)


def suspects(policy: Policy) -> tuple[Bug, ...]:
    """The causes a diagnosis under `policy` tries: the catalog, then every other policy that no bug tried states.

    A bug that behaves as another policy is tried under the card's only, where its words fit a student's scheduler;
    under another policy its mutant (the card with one change) is not that policy, which is tried by name instead."""
    tried = tuple(b for b in CATALOG if b.policy is None or policy == DEFAULT_POLICY)
    stated = {b.policy for b in tried}
    return tried + tuple(policy_bug(p) for p in all_policies() if p != policy and p not in stated)


def bug_named(name: str) -> Bug:
    """A catalog bug or a policy cause, by name."""
    return policy_bug(Policy.parse(name.removeprefix("policy:"))) if name.startswith("policy:") else BY_NAME[name]
