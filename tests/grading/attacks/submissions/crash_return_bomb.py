# ruff: noqa
"""Return pathological values in about 89 public runs: 300,000 ids never added, int subclasses with
hostile dunders and 2**127, an added sequence renamed, an output that holds itself, update() results
that never end or lie about their length, a 10**6-item generator as `finished`, update() returning the
scheduler. Correct everywhere else.

Expected: graded, those runs fail (score a little under 100), no crash of the grader, the same score
on a regrade.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import zlib as _zlib


def _fingerprint(s):
    return _zlib.crc32(repr((s.num_blocks, s.block_size, s.max_num_seqs, s.max_num_batched_tokens, s.eos,
                             [(q.seq_id, q.prompt_len, q.max_tokens) for q in s.waiting])).encode())


class _Cnt(int):
    def __index__(self):
        raise RuntimeError("index")

    def __int__(self):
        return 1

    def __eq__(self, o):
        return True

    def __hash__(self):
        return 0


class _Endless:
    def __init__(self, item):
        self.item = item

    def __iter__(self):
        while True:
            yield self.item

    def __len__(self):
        return 1


class _HugeLen(list):
    pass


class _LyingLen:
    def __init__(self, items):
        self.items = list(items)

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return 2 ** 100


class _SelfRef(list):
    pass


# the correct Sequence rebuilt with "__dict__" added to its __slots__ (any attribute can be set on a sequence):
# the same methods, no base class, so a reader sees the class it would see in a copy of the file
Sequence = type("Sequence", (), {k: v for k, v in vars(Sequence).items() if k not in Sequence.__slots__}
                | {"__slots__": (*Sequence.__slots__, "__dict__")})


_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def schedule(self):
        if not self.__dict__.get('_hooked'):  # the first schedule() of each instance, before its order check
            self._hooked = True
            self._fp = _fingerprint(self)
            kind = self._fp // 60 % 8
            if self._fp % 60 == 11:
                self._bomb = kind
        batch = super().schedule()
        kind = self.__dict__.get('_bomb')
        if kind == 0:  # 300k never-added ids
            out = dict(batch)
            for i in range(300000):
                out[f"ghost{i:07d}" * 4] = 1
            return out
        if kind == 1:  # counts that are int subclasses with hostile methods, and a huge one
            out = {k: _Cnt(v) for k, v in batch.items()}
            if out:
                out[next(iter(out))] = 2 ** 127 + 5
            return out
        if kind == 2:  # rename a running sequence after it was added
            for s in self.running:
                s.seq_id = s.seq_id + "\u202e"
                break
        if kind == 3:  # output replaced by a self-referential list
            for s in self.running:
                o = _SelfRef(s.output)
                o.append(o)
                s.output = o
                break
        return batch

    def update(self):
        done = super().update()
        kind = self.__dict__.get('_bomb')
        if kind == 4 and done:
            return _Endless(done[0])
        if kind == 5:
            return _LyingLen(done)
        if kind == 6:  # a queue attribute that becomes a 10**6-long generator
            self.finished = (self.finished[0] if self.finished else None for _ in range(10 ** 6))
        if kind == 7:  # update returns the scheduler itself
            return self
        return done
