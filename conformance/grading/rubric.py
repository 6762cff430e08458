"""The rubric: rubric items with points, visibility, the corpus features and checks that feed them.

Read from TOML (conformance/grading/rubric.toml is the documented default); every
field is validated and a bad one is named with its value.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from conformance.profiles import PROFILES
from conformance.workloads.reach import TIERS
from spec.errors import InvalidConfig
from spec.model import DEFAULT_POLICY, Policy

DEFAULT_RUBRIC = Path(__file__).with_name("rubric.toml")
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
SCORINGS = ("proportional", "all_or_nothing")
CHECKS = ("golden", "differential", "invariants", "equivalence", "liveness", "hygiene", "stateful")


class RubricError(ValueError):
    """The rubric file is malformed; the message names the field and the value."""


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    name: str
    points: float
    visibility: str  # Gradescope visibility of this test
    features: tuple[str, ...]  # corpus tags it is graded on; empty: every vector
    checks: tuple[str, ...]  # conformance checks whose findings cost it points
    seconds: float | None = None  # time limit of this item: the wall time of its cases added up; None: limits


@dataclass(frozen=True, slots=True)
class Limits:
    workload_seconds: float = 2.0  # one case (one run to completion); past it the case times out
    item_seconds: float = 60.0  # default time limit of an item: its cases' wall time added up
    run_seconds: float = 600.0  # a safety net for the whole corpus of one submission
    max_timeouts: int = 20  # after this many runs hang, the rest count as timeouts without running
    memory_mb: int = 1024
    output_bytes: int = 65536


@dataclass(frozen=True, slots=True)
class Rubric:
    version: int
    corpus: str
    scoring: str
    items: tuple[Item, ...]
    limits: Limits
    explore: bool
    explore_counts: bool
    explore_profile: str
    digest: str  # sha256 of the file: a grade names the exact rubric it used
    held_out: int = 0  # held-out cases drawn from the instructor's secret seed (conformance.grading.heldout)
    policy: Policy = DEFAULT_POLICY  # the rules every case is judged by (docs/rules.md, "Policies")
    reach: tuple[str, ...] = ()  # the reach tiers graded too (conformance/workloads/reach.py), in run order

    @property
    def total(self) -> float:
        return sum(i.points for i in self.items)


def _req(table: dict[str, object], key: str, kind: type | tuple[type, ...], where: str) -> object:
    if key not in table:
        raise RubricError(f"{where}: missing field {key!r}")
    value = table[key]
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise RubricError(f"{where}.{key} has the wrong type: {value!r}")
    return value


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RubricError(f"{where} must be a list of strings, got {value!r}")
    return tuple(value)


def parse_rubric(text: str, where: str = "rubric") -> Rubric:
    """Parse and validate a rubric."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RubricError(f"{where} is not valid TOML: {e}") from None
    scoring = data.get("scoring", "proportional")
    if scoring not in SCORINGS:
        raise RubricError(f"{where}.scoring is {scoring!r}; use one of {', '.join(SCORINGS)}")
    items = []
    raw_items = data.get("item", [])
    if not isinstance(raw_items, list) or not raw_items:
        raise RubricError(f"{where} has no [[item]] tables; a rubric needs at least one item")
    seen = set()
    for n, raw in enumerate(raw_items):
        w = f"{where}.item[{n}]"
        item_id = str(_req(raw, "id", str, w))
        if item_id in seen:
            raise RubricError(f"{w}.id {item_id!r} is used twice; item ids must be unique")
        seen.add(item_id)
        points = float(_req(raw, "points", (int, float), w))  # type: ignore[arg-type]
        if points < 0:
            raise RubricError(f"{w}.points must be >= 0, got {points}")
        visibility = raw.get("visibility", "visible")
        if visibility not in VISIBILITIES:
            raise RubricError(f"{w}.visibility is {visibility!r}; use one of {', '.join(VISIBILITIES)}")
        if visibility == "hidden" and points > 0:
            raise RubricError(f"{w} ({item_id!r}) is hidden with {points:g} points; Gradescope shows students "
                              "their total with hidden tests, so its points would show through the total. Use "
                              "visibility \"after_published\" (the total is then held back too) or points = 0")
        checks = _strings(raw.get("checks", list(CHECKS)), f"{w}.checks")
        for c in checks:
            if c not in CHECKS:
                raise RubricError(f"{w}.checks names {c!r}; known checks: {', '.join(CHECKS)}")
        seconds = raw.get("seconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0):
            raise RubricError(f"{w}.seconds must be a positive number, got {seconds!r}")
        items.append(Item(item_id, str(raw.get("name", item_id)), points, visibility,
                          _strings(raw.get("features", []), f"{w}.features"), checks,
                          None if seconds is None else float(seconds)))
    limits_raw = data.get("limits", {})
    limits = Limits(**{k: v for k, v in limits_raw.items() if k in Limits.__dataclass_fields__})
    for k in limits_raw:
        if k not in Limits.__dataclass_fields__:
            raise RubricError(f"{where}.limits.{k} is not a known limit; known: "
                              f"{', '.join(Limits.__dataclass_fields__)}")
    for k in Limits.__dataclass_fields__:
        v = getattr(limits, k)
        if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
            raise RubricError(f"{where}.limits.{k} must be a positive number, got {v!r}")
    explore = data.get("exploration", {})
    if explore.get("profile", "quick") not in PROFILES:
        raise RubricError(f"{where}.exploration.profile must name a check profile ({', '.join(PROFILES)}), got "
                          f"{explore.get('profile')!r}")
    held_out = data.get("held_out", {}).get("count", 0)
    if isinstance(held_out, bool) or not isinstance(held_out, int) or not 0 <= held_out <= 1000:
        raise RubricError(f"{where}.held_out.count must be an int from 0 to 1000, got {held_out!r}")
    try:
        policy = Policy.parse(data.get("policy", str(DEFAULT_POLICY)))
    except InvalidConfig as e:
        raise RubricError(f"{where}.policy: {e}") from None
    reach = data.get("reach", [])
    if type(reach) is not list or any(t not in TIERS for t in reach) or len(set(reach)) != len(reach):
        raise RubricError(f"{where}.reach must be a list of distinct reach tiers from {', '.join(TIERS)}, "
                          f"got {reach!r}")
    return Rubric(
        version=int(data.get("version", 1)), corpus=str(_req(data, "corpus", str, where)), scoring=scoring,
        items=tuple(items), limits=limits, explore=bool(explore.get("enabled", True)),
        explore_counts=bool(explore.get("count", False)), explore_profile=str(explore.get("profile", "quick")),
        digest=hashlib.sha256(text.encode()).hexdigest(), held_out=held_out, policy=policy,
        reach=tuple(reach))


def under_policy(rubric: Rubric, policy: Policy) -> Rubric:
    """The rubric judged by `policy` (grade --policy); its digest changes, so a regrade never mixes policies."""
    if policy == rubric.policy:
        return rubric
    digest = hashlib.sha256(f"{rubric.digest}\npolicy={policy}".encode()).hexdigest()
    return replace(rubric, policy=policy, digest=digest)


def load_rubric(path: str | Path | None = None) -> Rubric:
    """Read a rubric file; None means the bundled default."""
    path = Path(path) if path else DEFAULT_RUBRIC
    try:
        text = path.read_text()
    except OSError as e:
        raise RubricError(f"cannot read rubric {str(path)!r}: {e.strerror}") from None
    return parse_rubric(text, path.name)
