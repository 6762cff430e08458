"""Mutant eos_before_append: eos is checked before the token is appended, so eos is lost."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def advance(self, seq: Sequence, n: int) -> bool:
        seq.num_computed += n
        if seq.num_computed < seq.num_tokens:
            return False
        tok = self.sample_fn(seq)
        if tok == self.eos:  # bug: finished before the token is appended
            self.finish(seq)
            return True
        seq.output.append(tok)
        if len(seq.output) >= seq.max_tokens:
            self.finish(seq)
            return True
        return False
