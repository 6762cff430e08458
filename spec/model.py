"""Values of the reference model: Config, Seq, State, Batch, Event.

Everything here is immutable (frozen slotted dataclasses and tuples): the rules
in ``spec.rules`` build new values and never change an argument. Field names
follow the card and docs/api.md; see docs/rules.md, section "State".
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

from spec.errors import InvalidConfig


class Status(enum.Enum):
    """Where a sequence is: its queue, named as in the card."""

    WAITING = "WAITING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"


# The scheduling policies the model states (docs/rules.md, "Policies"): the card's, and vLLM v1's differences from
# it. A policy is part of a Config, so a trace written under one replays under it.
POLICIES = {
    "p07": "the card: a sequence preempted in phase 1 may be admitted again in phase 2 of the same step",
    "vllm-v1": "vLLM v1: a step in which phase 1 preempted admits no waiting sequence, and (reserve_full_isl, on by "
               "default) the waiting head is admitted only when blocks for its whole sequence are free (it still "
               "takes only its chunk's)",
}
CARD = "p07"  # the card's policy's name
# The engine settings that change a policy's scheduling, with their defaults (the engine's own), and what each does.
SETTINGS: dict[str, dict[str, bool]] = {"p07": {}, "vllm-v1": {"reserve_full_isl": True}}
SETTING_TEXT = {"reserve_full_isl": "vLLM's scheduler_reserve_full_isl: the waiting head is admitted only when blocks "
                                    "for its whole sequence are free; false: when those for its chunk are"}


@dataclass(frozen=True, slots=True)
class Policy:
    """The rules a run is judged by: a policy's name and the settings of its engine that differ from their defaults.

    Written "vllm-v1" (the engine's defaults) or "vllm-v1:reserve_full_isl=false" (``str`` and ``Policy.parse``)."""

    name: str = CARD  # one of POLICIES
    settings: tuple[tuple[str, bool], ...] = ()  # (setting, value) off its default, sorted by setting

    def __post_init__(self) -> None:
        if type(self.name) is not str or self.name not in POLICIES:
            raise InvalidConfig(f"policy must be one of {', '.join(POLICIES)}, got {self.name!r}")
        known = SETTINGS[self.name]
        for key, value in self.settings:
            if key not in known:
                raise InvalidConfig(f"policy {self.name} has no setting {key!r}; "
                                    + (f"it has {', '.join(known)}" if known else "it has none"))
            if type(value) is not bool:
                raise InvalidConfig(f"policy setting {key} must be true or false, got {value!r}")
        if list(self.settings) != sorted({k: v for k, v in self.settings if known[k] != v}.items()):
            raise InvalidConfig(f"policy settings must be distinct, sorted and off their defaults, got "
                                f"{self.settings!r}; build a Policy with Policy.parse")

    @classmethod
    def parse(cls, text: object) -> Self:
        """A policy from its written form, naming what is wrong in it."""
        if type(text) is not str:
            raise InvalidConfig(f"policy must be a string such as {CARD!r}, got {text!r}")
        name, _, rest = text.partition(":")
        if name not in POLICIES:
            raise InvalidConfig(f"policy must be one of {', '.join(POLICIES)} (with settings: "
                                f"vllm-v1:reserve_full_isl=false), got {text!r}")
        settings: dict[str, bool] = {}
        for part in filter(None, rest.split(",")):
            key, eq, value = part.partition("=")
            if not eq or value not in ("true", "false"):
                raise InvalidConfig(f"policy {text!r}: write each setting as name=true or name=false, got {part!r}")
            if key in settings:
                raise InvalidConfig(f"policy {text!r} sets {key} twice")
            settings[key] = value == "true"
        known = SETTINGS[name]
        unknown = [k for k in settings if k not in known]
        if unknown:
            raise InvalidConfig(f"policy {name} has no setting {unknown[0]!r}; "
                                + (f"it has {', '.join(known)}" if known else "it has none"))
        return cls(name, tuple(sorted((k, v) for k, v in settings.items() if known[k] != v)))

    def __str__(self) -> str:
        return self.name + "".join(f"{':' if i == 0 else ','}{k}={'true' if v else 'false'}"
                                   for i, (k, v) in enumerate(self.settings))

    def setting(self, key: str) -> bool:
        """A setting's value under this policy: its own, or its engine's default."""
        return dict(self.settings).get(key, SETTINGS[self.name][key])

    @property
    def holds_after_preemption(self) -> bool:
        """P2.policy: a step in which phase 1 preempted admits nobody (vLLM v1)."""
        return self.name == "vllm-v1"

    @property
    def reserve_full_isl(self) -> bool:
        """P2.whole: the waiting head is admitted only when blocks for its whole sequence are free."""
        return self.name == "vllm-v1" and self.setting("reserve_full_isl")

    @property
    def slug(self) -> str:
        """The policy in a file name: letters, digits, '-' and '_' only."""
        return str(self).replace(":", "-").replace(",", "-").replace("=", "-")


DEFAULT_POLICY = Policy()  # the card's


def policy_help() -> str:
    """The policies and their settings, for a --policy option's help."""
    settings = "; ".join(f"setting {k} ({SETTING_TEXT[k]}, default {'true' if d else 'false'})"
                         for n in POLICIES for k, d in SETTINGS[n].items())
    return "; ".join(f"{k}: {v}" for k, v in POLICIES.items()) + f"; {settings}; written name:setting=true|false"


def all_policies() -> tuple[Policy, ...]:
    """Every policy the model states: each name with its defaults, then each setting turned the other way."""
    return tuple(Policy(n) for n in POLICIES) + tuple(Policy(n, ((k, not d),)) for n in POLICIES
                                                      for k, d in SETTINGS[n].items())


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
    policy: Policy = DEFAULT_POLICY  # the rules it is judged by

    def __post_init__(self) -> None:
        for name in ("num_blocks", "block_size", "max_num_seqs", "max_num_batched_tokens"):
            _require_int(name, getattr(self, name), 1)
        if self.eos is not None:
            _require_int("eos", self.eos, None)
        if type(self.policy) is not Policy:
            raise InvalidConfig(f"policy must be a Policy, got {self.policy!r}; read a written one with Policy.parse")


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
