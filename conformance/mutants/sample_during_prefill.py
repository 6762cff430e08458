"""Mutant sample_during_prefill: sample_fn is called after an incomplete prefill chunk."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def advance(self, seq: Sequence, n: int) -> bool:
        seq.num_computed += n  # bug: no check that the prefill is complete
        tok = self.sample_fn(seq)
        seq.output.append(tok)
        if tok == self.eos or len(seq.output) >= seq.max_tokens:
            self.finish(seq)
            return True
        return False
