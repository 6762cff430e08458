"""Profiles: how much each source of workloads runs. Every source is deterministic.

| profile  | golden | corpus | exhaustive scope        | edge-biased examples | machine runs x steps |
|----------|--------|--------|-------------------------|----------------------|----------------------|
| quick    | 5      | all    | none                    | 60                   | 15 x 20              |
| default  | 5      | all    | SMALL (1,808 workloads) | 300                  | 60 x 30              |
| thorough | 5      | all    | BUILD (25,885 workloads)| 4000                 | 1000 x 50            |
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.workloads.exhaustive import BUILD, SMALL, Scope


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    scope: Scope | None  # the bounded-exhaustive scope run live, besides the frozen corpus
    edge_examples: int  # Hypothesis examples drawn from edge_workloads()
    machine_examples: int  # runs of the lockstep state machine
    machine_steps: int  # rules per machine run

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "scope": None if self.scope is None else self.scope.to_json(),
                "edge_examples": self.edge_examples, "machine_examples": self.machine_examples,
                "machine_steps": self.machine_steps}


PROFILES = {
    "quick": Profile("quick", None, 60, 15, 20),
    "default": Profile("default", SMALL, 300, 60, 30),
    "thorough": Profile("thorough", BUILD, 4000, 1000, 50),
}
