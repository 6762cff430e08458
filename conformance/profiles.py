"""Profiles: how much each source of workloads runs. Every source is deterministic.

Profiles are monotonic by construction: a profile with a ``base`` runs exactly the
base's stages first (same sources, same seeds, same order), then its own. So
whatever ``quick`` finds, ``default`` finds, and whatever ``default`` finds,
``thorough`` finds (``Profile.stages`` is the only place the order is decided).

| profile  | base    | own stages: exhaustive scope, edge-biased, scale, reach tier, machine runs x steps |
|----------|---------|-------------------------------------------------------------------------------------|
| quick    | -       | none, 60 (Hypothesis's fixed seed), 0, quick, 15 x 20                               |
| default  | quick   | SMALL (1,808 workloads), 240 (seed 2), 12 (seed 2), default, 45 x 30                |
| thorough | default | BUILD (25,885 workloads), 2,500 (seed 3), 40 (seed 3), thorough, 600 x 50           |

The reach tiers (conformance/workloads/reach.py) reach the values of the dimension table
(conformance/workloads/dimensions.py): quick's every value whose run is cheap, default's the
largest (crowds past 2**8 + 1, numbers past 2**32, 1,025 instances at once), thorough's the runs
that cost seconds each (10**4 steps, 2**11 + 1 preemptions of one sequence).

Golden cases and the whole frozen corpus (scale families included) run first in
every profile.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.workloads.exhaustive import BUILD, SMALL, Scope

SOURCES = ("exhaustive", "edge", "scale", "reach", "machine")


@dataclass(frozen=True, slots=True)
class Stage:
    """One run of one generated source."""

    source: str  # one of SOURCES
    examples: int = 0  # workloads drawn (edge, scale) or machine runs (machine)
    steps: int = 0  # rules per machine run
    scope: Scope | None = None  # the bounded-exhaustive scope (exhaustive)
    seed: int | None = None  # Hypothesis seed; None: derandomized (the machine always is: its runs differ by size)
    tier: str | None = None  # the reach tier (reach): conformance/workloads/reach.py TIERS

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"source": self.source}
        if self.source == "exhaustive":
            out["scope"] = None if self.scope is None else self.scope.to_json()
        elif self.source == "reach":
            out["tier"] = self.tier
        else:
            out["examples"] = self.examples
            out["seed"] = self.seed
        if self.source == "machine":
            out["steps"] = self.steps
        return out


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    scope: Scope | None  # the bounded-exhaustive scope run live, besides the frozen corpus
    edge_examples: int  # Hypothesis examples drawn from edge_workloads()
    machine_examples: int  # runs of the lockstep state machine
    machine_steps: int  # rules per machine run
    scale_examples: int = 0  # Hypothesis examples drawn from scale_workloads() (big, slow: few)
    base: Profile | None = None  # run this profile's stages first, unchanged
    seed: int | None = None  # seed of this profile's own Hypothesis stages; None: derandomized
    reach: str | None = None  # the reach tier this profile adds (its base's tiers run first)

    def own_stages(self) -> tuple[Stage, ...]:
        """This profile's stages after its base's, cheapest source first; empty sources are left out."""
        stages = []
        if self.scope is not None:
            stages.append(Stage("exhaustive", scope=self.scope))
        if self.edge_examples:
            stages.append(Stage("edge", self.edge_examples, seed=self.seed))
        if self.scale_examples:
            stages.append(Stage("scale", self.scale_examples, seed=self.seed))
        if self.reach is not None:
            stages.append(Stage("reach", tier=self.reach))
        if self.machine_examples:
            stages.append(Stage("machine", self.machine_examples, self.machine_steps))  # its own fixed seed
        return tuple(stages)

    def stages(self) -> tuple[Stage, ...]:
        """Every stage in run order: the base's (recursively), then this profile's own."""
        return (self.base.stages() if self.base is not None else ()) + self.own_stages()

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "base": None if self.base is None else self.base.name,
                "stages": [s.to_json() for s in self.stages()]}


QUICK = Profile("quick", None, 60, 15, 20, reach="quick")
DEFAULT = Profile("default", SMALL, 240, 45, 30, scale_examples=12, base=QUICK, seed=2, reach="default")
THOROUGH = Profile("thorough", BUILD, 2500, 600, 50, scale_examples=40, base=DEFAULT, seed=3, reach="thorough")
PROFILES = {"quick": QUICK, "default": DEFAULT, "thorough": THOROUGH}
