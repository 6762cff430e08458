"""Equivalent mutant: update() also samples running sequences that were not scheduled, if caught up.

Equivalent because no running sequence is ever caught up between steps: update() either
samples a sequence that reaches num_tokens (its num_tokens then grows by one) or finishes
it (it leaves running), and a partial prefill stays below num_tokens.
"""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def update(self) -> list[Sequence]:
        done = super().update()
        for seq in list(self.running):  # the extra sampling: never fires
            if seq.num_computed == seq.num_tokens and self.advance(seq, 0):
                done.append(seq)
        return done
