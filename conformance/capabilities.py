"""Capabilities: what an adapter declares about its engine's calling contract (docs/adapters.md).

An adapter class says ``capabilities = Capabilities(idle_schedule=False)``; the drivers read it from
the class (never from a submission's instance attributes) and honour it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from conformance.adapters import Factory
from conformance.catalog import BY_NAME
from conformance.checks.checkers import Finding
from conformance.limits import RAISED
from spec.model import POLICIES, SETTINGS, Config, Policy, Sample
from spec.trace import Workload

SIZES = ("max_prompt_len", "max_num_blocks", "max_kv_tokens")  # the declared sizes a workload must fit
DIFFERENCE_NAME_MAX = 64  # characters of a difference's name (a report's cause line starts with it)


@dataclass(frozen=True)
class Difference:
    """A way an engine's scheduler is known to differ from the card, as its adapter states it: the report's causes
    are these instead of catalog bugs the engine does not have (docs/adapters.md, "Known differences")."""

    name: str  # a short word of its own: "only-first-chunks"
    text: str  # what the engine does, in the card's terms
    source: str  # where in the engine's source it does it: "scheduler.py:42"
    bugs: tuple[str, ...] = ()  # catalog bugs (conformance/catalog.py) whose mutants behave this way, if any


# Which known difference made `finding` on `workload` (a name of Capabilities.differences), read from the engine's
# own state by rerunning the workload on an instance `factory` makes; None when none of them did.
Explain = Callable[[Factory, Workload, Finding], "str | None"]


class CapabilityError(Exception):
    """An adapter declares capabilities the suite cannot read; the run stops with this message."""


@dataclass(frozen=True)
class Capabilities:
    """What an adapter tells the suite about its engine, as its instances' ``capabilities`` attribute.

    The suite honours each one instead of reporting the engine's own calling contract as a finding
    (docs/adapters.md, "Capabilities"). The defaults are docs/api.md's contract.
    """

    idle_schedule: bool = True  # False: never call schedule() while no added request is unfinished
    max_prompt_len: int | None = None  # the longest prompt the engine can hold; None: any
    max_num_blocks: int | None = None  # the largest KV cache the engine can build; None: any
    max_kv_tokens: int | None = None  # the most tokens its KV cache can hold (num_blocks * block_size); None: any
    engine: str | None = None  # the policy the engine's scheduler follows by name (spec/model.py POLICIES), if known
    engine_settings: tuple[tuple[str, object], ...] = ()  # how the engine is configured, where that changes scheduling
    differences: tuple[Difference, ...] = ()  # the engine's known differences from the card, in the order explain tries
    explain: Explain | None = None  # which of them made a finding (given exactly when differences are)

    def __post_init__(self) -> None:
        if type(self.idle_schedule) is not bool:
            raise CapabilityError(f"Capabilities.idle_schedule must be True or False, got {self.idle_schedule!r}")
        if self.engine is not None and type(self.engine) is not str:
            raise CapabilityError(f"Capabilities.engine must be None or a policy's name, got {self.engine!r}")
        if type(self.engine_settings) is not tuple or \
                any(type(s) is not tuple or len(s) != 2 or type(s[0]) is not str for s in self.engine_settings):
            raise CapabilityError("Capabilities.engine_settings must be a tuple of (name, value) pairs, got "
                                  f"{self.engine_settings!r}")
        for name in SIZES:
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 1):
                raise CapabilityError(f"Capabilities.{name} must be None or an int >= 1, got {value!r}")
        self._check_differences()

    def _check_differences(self) -> None:
        if type(self.differences) is not tuple or any(type(d) is not Difference for d in self.differences):
            raise CapabilityError("Capabilities.differences must be a tuple of conformance.capabilities.Difference, "
                                  f"got {self.differences!r}")
        if bool(self.differences) != (self.explain is not None) or not (self.explain is None or callable(self.explain)):
            raise CapabilityError("Capabilities.differences and Capabilities.explain go together: give the engine's "
                                  "known differences and a function that tells which one made a finding, or neither")
        names = [d.name for d in self.differences]
        for d in self.differences:
            if type(d.name) is not str or not d.name or len(d.name) > DIFFERENCE_NAME_MAX or not d.name.isprintable():
                raise CapabilityError(f"a Difference's name must be a printable word of at most {DIFFERENCE_NAME_MAX} "
                                      f"characters, got {d.name!r}")
            if names.count(d.name) > 1:
                raise CapabilityError(f"Capabilities.differences names {d.name!r} twice; give each its own name")
            unknown = [b for b in d.bugs if b not in BY_NAME]
            if unknown:
                raise CapabilityError(f"Difference {d.name!r} names {unknown[0]!r}, which is not a catalog bug "
                                      f"(conformance/catalog.py); give the names of catalog bugs, or none")

    def difference(self, name: str) -> Difference:
        """The stated difference of that name; CapabilityError when explain gave a name the adapter never stated."""
        found = next((d for d in self.differences if d.name == name), None)
        if found is None:
            raise CapabilityError(f"the adapter's explain gave {name!r}, which is none of its differences "
                                  f"({', '.join(d.name for d in self.differences)}); return one of those or None")
        return found

    def stated_bugs(self) -> frozenset[str] | None:
        """The catalog bugs a diagnosis may name: the ones the engine's differences state (None: every one, for a
        scheduler that states no differences)."""
        return frozenset(b for d in self.differences for b in d.bugs) if self.differences else None

    def holds(self, workload: Workload) -> bool:
        """Whether the engine can hold the workload at all; the suite leaves out the ones it cannot."""
        config = workload.config
        prompts = max((r.prompt_len for r in workload.requests), default=0)
        return (self.max_prompt_len is None or prompts <= self.max_prompt_len) and \
            (self.max_num_blocks is None or config.num_blocks <= self.max_num_blocks) and \
            (self.max_kv_tokens is None or config.num_blocks * config.block_size <= self.max_kv_tokens)

    def policy(self) -> Policy | None:
        """The policy that states the engine's rules as it is configured; None when the adapter does not say.
        CapabilityError when none does, naming the setting no policy knows."""
        if self.engine is None:
            return None
        if self.engine not in POLICIES:
            raise CapabilityError(f"the adapter reports an engine that follows {self.engine!r}, and no policy "
                                  f"states its rules (there are {', '.join(POLICIES)}); check under one of them "
                                  "with --policy, which then judges the engine by rules it may not follow")
        known = SETTINGS[self.engine]
        for name, value in self.engine_settings:
            if name not in known:
                raise CapabilityError(
                    f"no policy matches the engine: it reports {name}={value!r}, a setting policy {self.engine} does "
                    f"not know (it knows {', '.join(known) or 'none'}); check with --policy to judge it by one anyway")
            if type(value) is not bool:
                raise CapabilityError(f"the engine's setting {name} must be True or False, got {value!r}")
        return Policy(self.engine, tuple(sorted((k, v) for k, v in self.engine_settings
                                                if type(v) is bool and known[k] != v)))

    def limits(self) -> str:
        """The declared sizes, for a note."""
        return ", ".join(f"{n} {v}" for n in SIZES if (v := getattr(self, n)))


DEFAULT_CAPABILITIES = Capabilities()


def capabilities_of(sut: object) -> Capabilities:
    """The capabilities an adapter instance declares (docs/api.md's contract when it declares none)."""
    caps = getattr(type(sut), "capabilities", DEFAULT_CAPABILITIES)
    if not isinstance(caps, Capabilities):
        raise CapabilityError(f"{type(sut).__name__}.capabilities must be a conformance.capabilities.Capabilities, "
                              f"got {type(caps).__name__}; write capabilities = Capabilities(idle_schedule=False)")
    return caps


def declared(factory: Callable[[Config, Sample], object]) -> Capabilities:
    """The capabilities of the instances `factory` makes, read from one made on a tiny config (the defaults
    when making it fails: that failure is the checks' finding, on every workload)."""
    try:
        sut = factory(Config(4, 2, 2, 4), lambda seq_id, output: 0)
    except RAISED:
        return DEFAULT_CAPABILITIES
    return capabilities_of(sut)
