"""The catalog's known bugs as small source edits of spec/rules.py, for showing that every proof can fail.

Each fault is stated once, as (anchor, replacement) edits of the text of
spec/rules.py. ``load(name)`` applies them and executes the result as a fresh
module with the same functions as ``spec.rules``; the model checker, the claims
and the tests then run that module exactly as they run the spec. An anchor that
no longer occurs exactly once in spec/rules.py raises FaultError naming the
fault and the anchor, so a fault can never silently stop being injected.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass
from pathlib import Path

import spec.rules

RULES_PATH = Path(spec.rules.__file__)


class FaultError(Exception):
    """A fault cannot be applied to the current spec/rules.py."""


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the one occurrence of `anchor` in spec/rules.py by `replacement`."""

    anchor: str
    replacement: str


@dataclass(frozen=True, slots=True)
class Fault:
    name: str  # as in the catalog of known bugs (conformance/catalog.py)
    rule: str  # the function of spec/rules.py it changes
    edits: tuple[Edit, ...]


_P1_GROW = "while (grown := try_grow(state, seq, seq.num_computed + n)) is None:"
_P2_GROW = "grown = try_grow(state, head, head.num_computed + n)"
_REQUEUE = "requeued = replace(victim, num_computed=0, num_blocks=0, status=Status.WAITING)"
_PHASE1 = "    state, budget, batch1, events1 = phase1_running(state, budget)\n"
_POLICY = "    admits, events_policy = admits_after_phase1(state, state.num_preemptions > preemptions)\n"
_PHASES = "    state, budget, batch2, events2 = phase2_waiting(state, budget if admits else 0)"

FAULTS: tuple[Fault, ...] = (
    Fault("blocks_by_num_tokens", "phase1_running, phase2_waiting", (
        Edit(_P1_GROW, "while (grown := try_grow(state, seq, seq.num_tokens)) is None:"),
        Edit(_P2_GROW, "grown = try_grow(state, head, head.num_tokens)"))),
    Fault("preempt_keeps_num_computed", "preempt", (
        Edit(_REQUEUE, "requeued = replace(victim, num_blocks=0, status=Status.WAITING)"),)),
    Fault("preempt_clears_output", "preempt", (
        Edit(_REQUEUE, "requeued = replace(victim, num_computed=0, num_blocks=0, status=Status.WAITING, output=())"),)),
    Fault("preempt_to_tail", "preempt", (
        Edit("waiting=(requeued,) + state.waiting,", "waiting=state.waiting + (requeued,),"),)),
    Fault("sample_during_prefill", "apply_one", (
        Edit("if seq.num_computed < seq.num_tokens:", "if False:"),)),
    Fault("phase2_continue", "phase2_waiting", (
        Edit("    while state.waiting and budget > 0:\n        head = state.waiting[0]",
             "    skip = 0\n    while skip < len(state.waiting) and budget > 0:\n        head = state.waiting[skip]"),
        Edit('": stop admitting (FCFS)"))\n            break', '": stop admitting (FCFS)"))\n            skip += 1\n'
             "            continue"),
        Edit("waiting=state.waiting[1:], running=state.running + (head,)",
             "waiting=state.waiting[:skip] + state.waiting[skip + 1:], running=state.running + (head,)"))),
    Fault("eos_before_append", "apply_one", (
        Edit("seq = replace(seq, output=seq.output + (token,))",
             "seq = replace(seq, output=seq.output + (() if token == state.config.eos else (token,)))"),)),
    Fault("no_admission_after_preemption", "admits_after_phase1", (
        Edit("if preempted and state.config.policy.holds_after_preemption and state.waiting:",
             "if preempted and state.waiting:"),)),
    Fault("budget_not_shared", "schedule_explained", (
        Edit(_PHASES, _PHASES.replace("(state, budget if", "(state, state.config.max_num_batched_tokens if")),)),
    Fault("max_num_seqs_off_by_one", "phase2_waiting", (
        Edit("if len(state.running) >= state.config.max_num_seqs:",
             "if len(state.running) > state.config.max_num_seqs:"),)),
    Fault("victim_first", "preempt, phase1_running", (
        Edit("victim = state.running[-1]", "victim = state.running[0]"),
        Edit("running=state.running[:-1],", "running=state.running[1:],"),
        Edit("            state, seq = grown\n",
             "            state, seq = grown\n"
             "            i = next(j for j, s in enumerate(state.running) if s.seq_id == seq.seq_id)\n"))),
    Fault("decode_not_charged", "phase1_running", (
        Edit('            budget -= n\n            events.append(Event("P1", ',
             '            budget -= 0 if seq.output and n == 1 else n\n            events.append(Event("P1", '),)),
    Fault("reserve_whole_prompt", "phase2_waiting", (
        Edit(_P2_GROW, "grown = try_grow(state, head, head.num_tokens)"),)),
    Fault("grow_on_mod_one", "try_grow", (
        Edit("need = blocks_for(state.config.block_size, tokens) - seq.num_blocks",
             "need = (int(tokens % state.config.block_size == 1) if seq.num_blocks\n"
             "            else blocks_for(state.config.block_size, tokens) - seq.num_blocks)"),)),
    Fault("capacity_off_by_one", "try_grow", (
        Edit("if state.blocks_used + need > state.config.num_blocks:",
             "if state.blocks_used + need >= state.config.num_blocks:"),)),
    Fault("finish_keeps_blocks", "finish", (
        Edit("done = replace(seq, num_blocks=0, status=Status.FINISHED)",
             "done = replace(seq, status=Status.FINISHED)"),
        Edit("blocks_used=state.blocks_used - seq.num_blocks,", "blocks_used=state.blocks_used,"))),
    Fault("preempt_keeps_blocks_used", "preempt", (
        Edit("blocks_used=state.blocks_used - victim.num_blocks,", "blocks_used=state.blocks_used,"),)),
    Fault("max_tokens_off_by_one", "apply_one", (
        Edit("or len(seq.output) >= seq.max_tokens:", "or len(seq.output) > seq.max_tokens:"),)),
    Fault("no_chunked_prefill", "phase2_waiting", (
        Edit(_P2_GROW, _P2_GROW + " if head.remaining <= budget else None"),)),
    Fault("prefill_or_decode", "schedule_explained", (
        Edit(_PHASE1 + _POLICY + _PHASES,
             "    state, _, batch2, events2 = phase2_waiting(state, budget)\n"
             "    batch1: Batch = ()\n"
             "    events1: tuple[Event, ...] = ()\n"
             "    events_policy: tuple[Event, ...] = ()\n"
             "    if not batch2:  # a step that admits anyone runs nobody else; one that runs them admits nobody\n"
             "        state, budget, batch1, events1 = phase1_running(state, budget)"),)),
    Fault("chunk_only_first", "phase2_waiting", (
        Edit(_P2_GROW, _P2_GROW + " if head.remaining <= budget or budget == state.config.max_num_batched_tokens "
             "else None"),)),
)
BY_NAME: dict[str, Fault] = {f.name: f for f in FAULTS}

# Faults of the spec's own guards, not bugs of a scheduler (submissions need not detect protocol misuse,
# docs/rules.md "Settled here"): there so that every claim of the proofs has a fault that breaks it.
GUARD_FAULTS: tuple[Fault, ...] = (
    Fault("protocol_pending_truthy", "schedule_explained", (
        Edit("if state.pending is not None:", "if state.pending:"),)),  # an empty batch no longer counts as pending
    Fault("add_accepts_empty", "check_request", (
        Edit("if type(value) is not int or value < 1:", "if type(value) is not int or value < 0:"),)),
    Fault("add_accepts_finished_id", "check_request", (
        Edit("if state.find(seq_id) is not None:",
             "if any(s.seq_id == seq_id for s in state.waiting + state.running):"),)),  # a finished id added again
    Fault("add_accepts_bool", "check_request", (
        Edit("if type(value) is not int or value < 1:", "if not isinstance(value, int) or value < 1:"),)),
    Fault("add_refuses_a_full_cache", "check_request", (
        Edit("if need > config.num_blocks:", "if need >= config.num_blocks:"),)),
)
GUARDS: dict[str, Fault] = {f.name: f for f in GUARD_FAULTS}

# Faults that are no catalog bug, there so that the claims on what the validation compares beyond the invariants
# (num_preemptions, the order of the batch, the order of finishing: NP, BO, FIN) and what the sampler is handed
# (SA) can each fail.
OBSERVABLE_FAULTS: tuple[Fault, ...] = (
    Fault("self_preemption_counted_twice", "phase1_running", (
        Edit("            if victim.seq_id == seq.seq_id:\n",
             "            if victim.seq_id == seq.seq_id:\n"
             "                state = replace(state, num_preemptions=state.num_preemptions + 1)\n"),)),
    Fault("admitted_first_in_batch", "schedule_explained", (
        Edit("    batch = batch1 + batch2\n", "    batch = batch2 + batch1\n"),)),
    Fault("eos_finished_first", "update_explained", (
        Edit("    state = replace(state, pending=None)\n",
             "    new = sorted(state.finished[finished_before:], key=lambda q: q.output[-1] != state.config.eos)\n"
             "    state = replace(state, pending=None, finished=state.finished[:finished_before] + tuple(new))\n"),)),
    Fault("sampler_sees_last_token", "apply_one", (  # a context window of one token
        Edit("    token = sample(seq_id, seq.output)\n", "    token = sample(seq_id, seq.output[-1:])\n"),)),
    Fault("hold_said_not_kept", "admits_after_phase1", (  # P2.policy's event, and phase 2 runs all the same
        Edit('        return False, (Event("P2.policy"', '        return True, (Event("P2.policy"'),)),
)
OBSERVABLE: dict[str, Fault] = {f.name: f for f in OBSERVABLE_FAULTS}

# Catalog bugs that are shapes of mutable code, with no counterpart in a pure transition function.
NOT_EXPRESSIBLE: dict[str, str] = {
    "batch_not_copied": "aliasing of the returned dict: the pure model returns a tuple no caller can change",
    "running_snapshot_loop": "a stale copy of a mutable running list; the pure model's running is a value, and what "
                             "a stale loop does with a sequence already preempted depends on the code",
    "skip_self_keeps_going": "after a sequence preempts itself, what the loop retries next is code-specific",
}


def apply_edits(text: str, edits: tuple[Edit, ...], what: str, fix: str = "update the edit to the new text") -> str:
    """`text` with each edit applied in order; FaultError naming `what` if an anchor is not there exactly once."""
    for edit in edits:
        count = text.count(edit.anchor)
        if count != 1:
            raise FaultError(f"{what}: anchor {edit.anchor!r} occurs {count} times (expected exactly once); {fix}")
        text = text.replace(edit.anchor, edit.replacement)
    return text


def patched_source(name: str, source: str | None = None) -> str:
    """The text of spec/rules.py (or `source`) with fault `name` applied."""
    fault = BY_NAME.get(name) or GUARDS.get(name) or OBSERVABLE.get(name)
    if fault is None:
        why = NOT_EXPRESSIBLE.get(name)
        raise FaultError(f"fault {name!r}: " + (f"not expressible as an edit of spec/rules.py ({why})" if why else
                         f"unknown; known faults: {', '.join([*BY_NAME, *GUARDS, *OBSERVABLE])}"))
    text = RULES_PATH.read_text() if source is None else source
    return apply_edits(text, fault.edits, f"fault {name!r}",
                       f"the text it edits in {RULES_PATH} changed: update the fault's edit in spec/faults.py")


def module_with(edits: tuple[Edit, ...], name: str) -> types.ModuleType:
    """A fresh module: spec/rules.py with `edits` applied, named for `name`."""
    return _module(apply_edits(RULES_PATH.read_text(), edits, f"{name} (edits of {RULES_PATH})"), name)


def _module(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(f"spec.rules_with_{name}")
    module.__file__ = str(RULES_PATH)
    exec(compile(source, f"{RULES_PATH} [fault {name}]", "exec"), module.__dict__)
    return module


@functools.cache
def load(name: str) -> types.ModuleType:
    """A fresh module: spec/rules.py with fault `name` applied (cached per process)."""
    return _module(patched_source(name), name)


def rules(name: str | None) -> types.ModuleType:
    """spec.rules itself for None, else the module with fault `name`."""
    return spec.rules if name is None else load(name)
