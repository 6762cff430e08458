"""Beyond the small scope: eos compared by identity; only ids outside -5..256 and fresh ints show it."""

from reference_scheduler import Scheduler as Reference
from reference_scheduler import Sequence, SequenceStatus

__all__ = ["Scheduler", "Sequence", "SequenceStatus"]


class Scheduler(Reference):
    def advance(self, seq: Sequence, n: int) -> bool:
        seq.num_computed += n
        if seq.num_computed < seq.num_tokens:
            return False
        tok = self.sample_fn(seq)
        seq.output.append(tok)
        if tok is self.eos or len(seq.output) >= seq.max_tokens:  # bug: `is`, not ==
            self.finish(seq)
            return True
        return False
