"""Catalog bugs that are shapes of code, not changes of a rule, as edits of a generated submission.

spec/faults.py states every bug that is one rule changed; the proofs run those. The bugs here
have no counterpart in the pure model that a proof could use (spec/faults.py, NOT_EXPRESSIBLE,
says why), or they change nothing at all (the equivalent mutants), so they are stated only for
the submissions: as (anchor, replacement) edits of the whole text that build.py assembles from
spec/errors.py, spec/model.py, spec/rules.py and shim.py. An anchor must occur exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec.faults import Edit


@dataclass(frozen=True, slots=True)
class Shape:
    name: str  # as in the catalog of known bugs, or equivalent_* (tests/mutants/equivalent)
    where: str  # the function or method it changes
    edits: tuple[Edit, ...]  # applied in order to the assembled submission


# Every submission: update() applies the batch by seq_id, so a scheduled sequence that a bug moved
# out of running is advanced where it is (shim.apply_stale) instead of stopping the rule's lookup.
SHELL = Shape("shell", "apply_one", (
    Edit("    index = next(i for i, s in enumerate(state.running) if s.seq_id == seq_id)\n",
         "    index = next((i for i, s in enumerate(state.running) if s.seq_id == seq_id), None)\n"
         "    if index is None:  # not running: only a bug schedules it (shim.apply_stale)\n"
         "        return apply_stale(state, seq_id, n, sample)\n"),))

_P1_LOOP = "    i = 0\n    while i < len(state.running) and budget > 0:\n        seq = state.running[i]\n"
_SKIP_SELF = ('                                          f": preempt {seq.seq_id} = running[-1], itself; skip it"))\n'
              "                break\n")
_P1_FITS = "        else:\n            # P1: it fits; schedule n tokens of it\n            state, seq = grown\n"

SHAPES: tuple[Shape, ...] = (
    Shape("batch_not_copied", "Scheduler.schedule", (
        Edit("        return dict(self._batch)\n", "        return self._batch  # bug: the dict update() reads\n"),)),
    Shape("running_snapshot_loop", "phase1_running", (
        Edit(_P1_LOOP,
             "    i = 0\n"
             "    for seq in state.running:  # bug: a copy; a sequence preempted earlier in the step is still visited\n"
             "        if budget <= 0:\n"
             "            break\n"
             "        seq = next(s for s in state.seqs() if s.seq_id == seq.seq_id)\n"),
        Edit("            state = replace(state, running=state.running[:i] + (seq,) + state.running[i + 1:])\n",
             "            state = replace(state, running=tuple(seq if s.seq_id == seq.seq_id else s\n"
             "                                                 for s in state.running),\n"
             "                            waiting=tuple(seq if s.seq_id == seq.seq_id else s\n"
             "                                          for s in state.waiting))\n"))),
    Shape("skip_self_keeps_going", "phase1_running", (
        Edit("        n = chunk(seq, budget)\n        while (grown",
             "        n = chunk(seq, budget)\n        skipped = False\n        while (grown"),
        Edit("            before = state\n            state, victim = preempt(state)\n",
             "            if not state.running:\n                break\n"
             "            before = state\n            state, victim = preempt(state)\n"),
        Edit(_SKIP_SELF, _SKIP_SELF.replace(
            "                break\n",
            "                seq, skipped = state.waiting[0], True  # bug: no break; the ones before it go too\n"
            "                continue\n")),
        Edit(_P1_FITS, _P1_FITS.replace("            state, seq = grown\n",
                                        "            if skipped:\n                continue\n"
                                        "            state, seq = grown\n")))),
    Shape("equivalent_max_num_seqs_in_phase1", "phase1_running", (
        Edit("    while i < len(state.running) and budget > 0:\n",
             "    while i < len(state.running) and budget > 0 and len(batch) < state.config.max_num_seqs:\n"),)),
    Shape("equivalent_sample_unscheduled_caught_up", "update_explained", (
        Edit("    state = replace(state, pending=None)\n",
             "    for seq in state.running:  # the extra sampling of a caught-up sequence: never fires\n"
             "        if seq.num_computed == seq.num_tokens:\n"
             "            state, _, seq_events = apply_one(state, seq.seq_id, 0, sample)\n"
             "            events.extend(seq_events)\n"
             "    state = replace(state, pending=None)\n"),)),
)
BY_NAME: dict[str, Shape] = {s.name: s for s in SHAPES}

# Why each equivalent mutant changes nothing (docs/conformance.md, "Equivalent mutants").
EQUIVALENT: dict[str, str] = {
    "equivalent_max_num_seqs_in_phase1": "len(running) <= max_num_seqs always holds (admission checks it and "
                                         "nothing else grows running), so the extra limit never cuts phase 1 short",
    "equivalent_sample_unscheduled_caught_up": "no running sequence is ever caught up between steps: update() "
                                               "samples one that reaches num_tokens (which then grows by one) or "
                                               "finishes it, and a partial prefill stays below num_tokens",
}
