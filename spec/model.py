"""Values of the reference model: Config, Seq, State, Batch, Event.

Everything here is immutable (frozen slotted dataclasses and tuples): the rules
in ``spec.rules`` build new values and never change an argument. Field names
follow the card and docs/api.md; see docs/rules.md, section "State".
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from spec.errors import InvalidConfig


class Status(enum.Enum):
    """Where a sequence is: its queue, named as in the card."""

    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


# The scheduling policies the model states (docs/rules.md, "Policies"): the card's, and vLLM v1's one
# difference from it. A policy is part of a Config, so a trace written under one replays under it.
POLICIES = {
    "p07": "the card: a sequence preempted in phase 1 may be admitted again in phase 2 of the same step",
    "vllm-v1": "vLLM v1: a step in which phase 1 preempted admits no waiting sequence, and the waiting head is "
               "admitted only when blocks for its whole sequence are free (it still takes only its chunk's)",
}
DEFAULT_POLICY = "p07"

Batch = tuple[tuple[str, int], ...]  # (seq_id, n) pairs in scheduling order
Sample = Callable[[str, tuple[int, ...]], int]  # sees only (seq_id, output so far)


def _require_int(name: str, value: object, minimum: int | None) -> None:
    if type(value) is not int:
        raise InvalidConfig(f"{name} must be an int, got {value!r} ({type(value).__name__}); pass a whole number")
    if minimum is not None and value < minimum:
        raise InvalidConfig(f"{name} must be >= {minimum}, got {value}; every budget and size is at least 1")


@dataclass(frozen=True, slots=True)
class Config:
    """The three budgets, the end-of-sequence token and the policy; validated on creation."""

    num_blocks: int  # KV blocks in the whole cache
    block_size: int  # tokens per KV block
    max_num_seqs: int  # limit on len(running), checked at admission (phase 2)
    max_num_batched_tokens: int  # token budget of one schedule() call
    eos: int | None = None  # end-of-sequence token; None: never
    policy: str = DEFAULT_POLICY  # one of POLICIES

    def __post_init__(self) -> None:
        for name in ("num_blocks", "block_size", "max_num_seqs", "max_num_batched_tokens"):
            _require_int(name, getattr(self, name), 1)
        if self.eos is not None:
            _require_int("eos", self.eos, None)
        if type(self.policy) is not str or self.policy not in POLICIES:
            raise InvalidConfig(f"policy must be one of {', '.join(POLICIES)}, got {self.policy!r}")


@dataclass(frozen=True, slots=True)
class Seq:
    """One request and its progress; num_tokens is derived, never stored."""

    seq_id: str
    prompt_len: int  # tokens in the prompt
    max_tokens: int  # the sequence finishes when len(output) reaches this
    output: tuple[int, ...] = ()  # sampled tokens, in order; kept across preemption (I4)
    num_computed: int = 0  # tokens whose KV is computed; 0 <= num_computed <= num_tokens (I3)
    num_blocks: int = 0  # KV blocks held; 0 unless running (I1)
    status: Status = Status.WAITING

    @property
    def num_tokens(self) -> int:
        """prompt_len + len(output): the tokens the sequence holds once all are computed."""
        return self.prompt_len + len(self.output)

    @property
    def remaining(self) -> int:
        """Tokens not yet computed: 1 while decoding, more in a chunked prefill."""
        return self.num_tokens - self.num_computed


@dataclass(frozen=True, slots=True)
class Event:
    """One decision of schedule() or update(), with its rule id and the numbers behind it."""

    rule: str  # rule id, e.g. "P1.preempt"; see docs/rules.md
    seq_id: str | None  # the sequence the decision is about, if any
    message: str  # one line a student can read
    data: tuple[tuple[str, int | str | None], ...] = ()  # the numbers, by name

    def to_json(self) -> dict[str, object]:
        return {"rule": self.rule, "seq_id": self.seq_id, "message": self.message, "data": dict(self.data)}


@dataclass(frozen=True, slots=True)
class State:
    """The whole scheduler: config, the three queues, the block count, the pending batch."""

    config: Config
    waiting: tuple[Seq, ...] = ()  # head first; arrival order except preempted ones at the head (I5)
    running: tuple[Seq, ...] = ()  # admission order; running[-1] is the next victim
    finished: tuple[Seq, ...] = ()  # finishing order
    blocks_used: int = 0  # == sum(s.num_blocks for s in running) (I1)
    num_preemptions: int = 0  # preemptions so far
    pending: Batch | None = field(default=None)  # set by schedule(), consumed by update()

    def seqs(self) -> tuple[Seq, ...]:
        """Every sequence the scheduler holds, queue by queue."""
        return self.waiting + self.running + self.finished

    def find(self, seq_id: str) -> Seq | None:
        """The sequence with this id in any queue, or None."""
        for seq in self.seqs():
            if seq.seq_id == seq_id:
                return seq
        return None

    def by_id(self) -> dict[str, Seq]:
        """Every sequence by its id: find() for all of them at once (the first one, if an id is held twice)."""
        out: dict[str, Seq] = {}
        for seq in self.seqs():
            out.setdefault(seq.seq_id, seq)
        return out
