"""Bugs outside the catalog that only the scale families reach, planted the catalog's way.

Each is a Shape: (anchor, replacement) edits of the submission conformance/mutants/build.py
assembles (spec/model.py, spec/rules.py, then the API shim), written to a file at test time.
"""

from conformance.mutants.shapes import Shape
from spec.faults import Edit

BEYOND = {s.name: s for s in (
    # eos compared by identity; only ids outside -5..256 and fresh ints show it
    Shape("eos_identity", "apply_one", (
        Edit("if (eos is not None and token == eos) or", "if (eos is not None and token is eos) or"),)),
    # blocks counted with float division; wrong once token counts pass 2**53
    Shape("float_blocks", "blocks_for", (
        Edit("    return -(-tokens // block_size)\n",
             "    import math\n\n    return math.ceil(tokens / block_size)\n"),)),
    # a sequence preempted three times loses its output (a retry limit)
    Shape("preempt_cap", "preempt", (
        Edit("    status: Status = Status.WAITING\n",
             "    status: Status = Status.WAITING\n    num_preempted: int = 0\n"),
        Edit("    requeued = replace(victim, num_computed=0, num_blocks=0, status=Status.WAITING)\n",
             "    requeued = replace(victim, num_computed=0, num_blocks=0, status=Status.WAITING,\n"
             "                       num_preempted=victim.num_preempted + 1)\n"
             "    if requeued.num_preempted >= 3:  # bug: too many retries restart the sequence from its prompt\n"
             "        requeued = replace(requeued, output=())\n"))),
    # a step counter kept in a byte; from step 256 on, the budget is lost for a step
    Shape("step_wrap", "Scheduler.schedule", (
        Edit("    def schedule(self) -> dict[str, int]:\n",
             "    def schedule(self) -> dict[str, int]:\n"
             "        self._step = (getattr(self, '_step', 0) + 1) % 256  # bug: wraps\n"
             "        if self._step == 0:\n"
             "            self._batch = {}\n"
             "            return {}\n"),)),
    # the waiting queue is a ring of 32 slots; a 33rd waiting sequence drops the oldest
    Shape("waiting_window", "Scheduler.add", (
        Edit("        self._state = after = self._add(before, seq.seq_id, seq.prompt_len, seq.max_tokens)\n",
             "        self._state = after = self._add(before, seq.seq_id, seq.prompt_len, seq.max_tokens)\n"
             "        if len(after.waiting) > 32:  # bug: a bounded queue silently drops its head\n"
             "            self._state = after = replace(after, waiting=after.waiting[1:])\n"),)),
)}
