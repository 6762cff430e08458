"""Root causes: every failing workload put down to the fewest known bugs that explain it, the rest grouped
by what went wrong.

The diagnosis asks which one bug reproduces *every* counterexample exactly. A real engine
differs from the card in several ways at once, and each failing workload shows whichever
difference comes first, so here each failing corpus vector and each counterexample is
explained on its own. A suspect (a catalog mutant, or the spec under another policy)
explains a finding when its own first divergence on that workload is at the same step and
call, under the same rule, with the same first differing entry: it agrees with the spec up
to there and then goes wrong in the same way. The rest of that step may differ, since
another of the engine's differences may show there too. The fewest suspects that explain
every explained finding are chosen greedily, most findings first; findings no suspect
explains are grouped by what went wrong (call, kind of change, rule), with the features
every one of them has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters import Factory
from conformance.capabilities import Capabilities, CapabilityError, Difference
from conformance.catalog import suspects
from conformance.checks import checkers, whitebox
from conformance.checks.checkers import Finding
from conformance.drivers import run_workload
from conformance.workloads.corpus import features as workload_features
from spec.trace import Workload

SAMPLED = 24  # findings of one kind every suspect is run on (suspect_findings)
FEATURES_SHOWN = 6  # feature names printed per cause (all are in the JSON)
ALSO_SHOWN = 3  # other suspects that fit some of a cause's findings, printed ...
ALSO_SHARE = 0.1  # ... when they fit at least this share of them
COMMON_SHOWN = 2  # features every finding of an unexplained cause has, printed
STEPWISE = {"differential": checkers.differential, "invariants": whitebox.invariants, "hygiene": checkers.hygiene}


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()  # past the end of a list
BATCH_WORDS = {"I2": "tokens than max_num_batched_tokens", "I6": "sequences than max_num_seqs"}
WHOLE_RUN_RULES = ("H.fresh_dict", "H.instances", "H.retained")  # hygiene probes that need whole runs
Rerun = Callable[[Factory, "Item"], Finding | None]  # the full check, for what stepwise judging cannot see
Combine = Callable[[Sequence["Item"], Sequence[str], bool, Rerun, bool], list[tuple[str, list["Item"]]]]
MINOR = 3  # a cause of at most this many findings and no counterexample may be chance (listed on one shared line)


@dataclass(frozen=True)
class Item:
    """One finding to explain: a failing corpus vector's earliest one, or a counterexample's."""

    source: str  # corpus/<id>, golden/<case>, or where a counterexample came from
    workload: Workload
    finding: Finding
    counterexample: bool = False

    @property
    def check(self) -> str:
        return self.finding.check


def local(f: Finding | None) -> tuple[Any, ...] | None:
    """What a suspect must reproduce: check, rule, step, call, and the first entry that differs."""
    if f is None:
        return None
    head = (f.check, f.rule, f.step, f.call)
    if f.check == "invariants":
        return head  # the same invariant broken at the same call: by how much is the engine's own arithmetic
    if isinstance(f.expected, list) and isinstance(f.actual, list):
        want, got = first_difference(f.expected, f.actual)
        if _row(want) and _row(got) and want[0] != got[0]:
            got = got[0]  # another sequence than the spec's: which one is the decision, not what it was given
        return head + (repr(want), repr(got))
    return head + ((raised_kind(f),) if f.rule == "H.raised" else (repr(f.actual),))


def first_difference(expected: list[Any], actual: list[Any]) -> tuple[Any, Any]:
    """The first differing entries; MISSING past the end of a list."""
    pos = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
               min(len(expected), len(actual)))
    return (expected[pos] if pos < len(expected) else MISSING, actual[pos] if pos < len(actual) else MISSING)


def _row(entry: Any) -> bool:
    """A [seq_id, value] entry of a batch or of the sample calls."""
    return isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)


def raised_kind(f: Finding) -> str:
    """The exception's type in an H.raised finding: "step 2: update IndexError: ...", or a golden case's
    "budget16: step 2 update raised WireError: ..." (the case's name comes first)."""
    at = f.message.find(f"{f.call} ")
    rest = f.message[at + len(f.call) + 1:] if at >= 0 else f.message
    return rest.removeprefix("raised ").split(":", 1)[0]


def stepwise(factory: Factory, item: Item, white_box: bool, rerun: Rerun) -> Finding | None:
    """The suspect's first finding of the item's check, run only as far as the item's step when the check
    judges step by step (most findings are early; a scale vector runs a thousand steps)."""
    f = item.finding
    judge = STEPWISE.get(f.check)
    if judge is None or f.rule in WHOLE_RUN_RULES:
        return rerun(factory, item)
    observed = run_workload(item.workload, factory, white_box=white_box and f.check == "invariants", until=f.step)
    return next((g for g in judge(item.workload, observed) if g.step <= f.step), None)


def change(f: Finding) -> str:
    """What went wrong, without ids or values: the key unexplained findings are grouped by."""
    if f.rule == "H.raised":
        return f"{f.call} raises {raised_kind(f)}"
    if f.check == "invariants" and f.call == "schedule" and f.rule in BATCH_WORDS and isinstance(f.actual, int):
        return f"schedule() returns more {BATCH_WORDS[f.rule]}"  # what a black-box batch showed (batch_invariants)
    compared = f.check in ("differential", "golden") or (f.check == "stateful" and f.rule[:1] in "PU")
    if not (compared and isinstance(f.expected, list) and isinstance(f.actual, list)):
        return f"{f.call}() differs from the spec" if compared else f"{f.call}() fails {f.rule}"
    want, got = first_difference(f.expected, f.actual)
    entry = "a sequence" if f.call == "schedule" else "an entry"
    if got is MISSING:
        return f"{f.call}() leaves out {entry} the spec has"
    if want is MISSING:
        return f"{f.call}() adds {entry} the spec does not have"
    if _row(want) and _row(got) and want[0] == got[0]:
        if f.call == "schedule":
            return f"schedule() gives {'more' if got[1] > want[1] else 'fewer'} tokens than the spec"
        return f"{f.call}() gives a sequence another value than the spec"
    return f"{f.call}() has another {entry.split(' ', 1)[1]} first"


@dataclass
class Cause:
    """Findings with one cause: the suspects that explain them (none: grouped by what went wrong)."""

    bugs: tuple[str, ...]
    items: list[Item]
    what: str = ""  # for no known bug: the kind of divergence
    common: tuple[str, ...] = ()  # features every finding's workload has (no known bug only)
    also: tuple[tuple[str, int], ...] = ()  # other suspects that explain some of the findings, and how many
    near: tuple[tuple[str, int], ...] = ()  # suspects that go wrong alike (same step, rule, kind), no known bug only
    features: set[str] = field(default_factory=set)
    difference: Difference | None = None  # the engine's known difference that made every finding (by_difference)

    def name(self) -> str:
        if self.difference is not None:
            d = self.difference
            return f"engine difference {d.name} ({d.text}; {d.source})"
        return " or ".join(self.bugs) if self.bugs else f"no known bug: {self.what}"

    @property
    def findings(self) -> list[Item]:
        return [i for i in self.items if i.counterexample]

    @property
    def vectors(self) -> int:
        return sum(1 for i in self.items if i.source.startswith("corpus/") and not i.counterexample)

    def checks(self) -> list[str]:
        """Each check with the rules its findings broke, the counterexamples' first."""
        rules: dict[str, dict[str, None]] = {}
        for i in sorted(self.items, key=lambda i: not i.counterexample):
            rules.setdefault(i.check, {}).setdefault(i.finding.rule)
        return [f"{check} [{', '.join(r)}]" for check, r in rules.items()]

    def line(self) -> str:
        name = self.name()
        checks = self.checks()
        shown = sorted(self.features)[:FEATURES_SHOWN]
        more = ", ..." if len(self.features) > FEATURES_SHOWN else ""
        parts = [f"{', '.join(checks)} ({len(checks)} check{'s' * (len(checks) != 1)}, "
                 f"{len(self.features)} feature{'s' * (len(self.features) != 1)}"
                 f"{': ' + ', '.join(shown) + more if shown else ''})"]
        if self.vectors:
            parts.append(f"{self.vectors} corpus vector{'s' * (self.vectors != 1)}")
        if self.common:
            parts.append(f"every one with {' and '.join(self.common)}")
        if self.also:
            parts.append("also fits " + ", ".join(f"{n} ({k} of them)" for n, k in self.also))
        if self.near:
            parts.append("goes wrong alike: " + ", ".join(f"{n} ({k} of them)" for n, k in self.near))
        cxs = [i.source for i in self.findings]
        example = next((i.source for i in self.items if not i.counterexample), None)
        if cxs:
            parts.append(f"counterexample{'s' * (len(cxs) != 1)} of {', '.join(i.check for i in self.findings)}")
        elif example is not None:
            parts.append(f"e.g. {example}")
        return f"{name}: " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"bugs": list(self.bugs), "what": self.what or None, "checks": [i.check for i in self.findings],
                "rules": [i.finding.rule for i in self.findings], "vectors": self.vectors,
                "sources": [i.source for i in self.items], "common": list(self.common),
                "also": [list(p) for p in self.also], "near": [list(p) for p in self.near],
                "features": sorted(self.features),
                "difference": None if self.difference is None else {
                    "name": self.difference.name, "text": self.difference.text, "source": self.difference.source,
                    "bugs": list(self.difference.bugs)}}


def by_difference(items: Sequence[Item], engine: Capabilities, factory: Factory) -> tuple[list[Cause], list[Item]]:
    """The items the engine's adapter puts down to one of its stated differences (Capabilities.explain), one cause
    per difference, in the order the adapter states them; and the items none of them made, for the catalog."""
    if engine.explain is None:
        return [], list(items)
    held: dict[str, list[Item]] = {}
    rest: list[Item] = []
    for item in items:
        try:
            name = engine.explain(factory, item.workload, item.finding)
        except CapabilityError:
            raise
        except Exception as e:  # noqa: BLE001 - the adapter's code: its defect is reported as the adapter's
            raise CapabilityError(f"the adapter's explain raised {type(e).__name__}: {e} on the finding "
                                  f"{item.finding.check} [{item.finding.rule}] of {item.source}") from None
        if name is None:
            rest.append(item)
        else:
            held.setdefault(engine.difference(name).name, []).append(item)
    causes = [Cause((), held[d.name], difference=d) for d in engine.differences if d.name in held]
    for c in causes:
        c.features = {t for i in c.items for t in tags(i.workload)}
    return causes, rest


def suspect_findings(items: Sequence[Item], white_box: bool, rerun: Rerun, make: Callable[[str], Factory | None]
                     ) -> list[dict[str, Finding | None]]:
    """For each item, the suspects' own first findings of the item's check on its workload.

    Every suspect is run on the first SAMPLED items of each kind of divergence (check, `change`, rule); on
    the rest of that kind, only the suspects that explained one of those: a suspect that explains none of
    24 findings of a kind is not run on the others (which keeps a bug failing 500 vectors to seconds)."""
    out = []
    seen: dict[tuple[str, str, str], int] = {}
    useful: dict[tuple[str, str, str], set[str]] = {}
    for item in items:
        kind, want = (item.check, change(item.finding), item.finding.rule), local(item.finding)
        names = [bug.name for bug in suspects(item.workload.config.policy)]
        seen[kind] = seen.get(kind, 0) + 1
        if seen[kind] > SAMPLED:
            names = [n for n in names if n in useful.get(kind, set())]
        found = {n: stepwise(f, item, white_box, rerun) for n in names if (f := make(n)) is not None}
        useful.setdefault(kind, set()).update(n for n, g in found.items() if local(g) == want)
        out.append(found)
    return out


def greedy_cover(explained: Sequence[Set[str]], order: Sequence[str]) -> list[tuple[str, list[int]]]:
    """The fewest names that cover every explained index, chosen greedily: the one covering most of what is
    left first (ties: earlier in `order`), each with the indices it takes."""
    left = [i for i, e in enumerate(explained) if e]
    out: list[tuple[str, list[int]]] = []
    while left:
        best = max(order, key=lambda n: (sum(1 for i in left if n in explained[i]), -order.index(n)))
        covered = [i for i in left if best in explained[i]]
        out.append((best, covered))
        left = [i for i in left if i not in covered]
    return out


def root_causes(items: Sequence[Item], white_box: bool, rerun: Rerun, make: Callable[[str], Factory | None],
                totals: dict[str, int] | None = None, combine: Combine | None = None) -> list[Cause]:
    """Every item in one cause: the fewest suspects that explain the explained ones, then groups by `change`.

    `totals` (feature -> corpus vectors with it) orders an unexplained cause's shared features, rarest first;
    `combine` (conformance/checks/pairs.py) tries two named bugs at once on each group before it is left
    unexplained."""
    found = suspect_findings(items, white_box, rerun, make)
    explained = [frozenset(n for n, g in by.items() if local(g) == local(item.finding))
                 for item, by in zip(items, found, strict=True)]
    order = [b.name for b in suspects(items[0].workload.config.policy)] if items else []
    causes: list[Cause] = []
    for _, covered in greedy_cover(explained, order):
        ties = tuple(n for n in order if all(n in explained[i] for i in covered))
        also = {n: k for n in order if n not in ties
                and (k := sum(1 for i in covered if n in explained[i])) >= ALSO_SHARE * len(covered)}
        causes.append(Cause(ties, [items[i] for i in covered], also=ranked(also)))
    groups: dict[str, list[int]] = {}
    for i, e in enumerate(explained):
        if not e:
            f = items[i].finding
            groups.setdefault(change(f) + ("" if f.rule in change(f) else f" [{f.rule}]"), []).append(i)
    pairs: Combine = combine or (lambda *a: [])
    for c in sorted(causes, key=lambda c: len(c.items)):  # two causes needed anyway beat a third bug
        others = [d.bugs[0] for d in causes if d is not c and len(d.items) > MINOR and d.bugs[0] not in c.bugs]
        instead = pairs(c.items, others, white_box, rerun, True) if len(c.items) <= 2 * SAMPLED else []
        if len(instead) == 1 and len(instead[0][1]) == len(c.items):
            c.bugs, c.also = (instead[0][0],), ()
    named = [c.bugs[0] for c in causes if len(c.items) > MINOR]
    for what, group in list(groups.items()):
        for pair, held in pairs([items[i] for i in group], named, white_box, rerun, False):
            causes.append(Cause((pair,), held))
            group = [i for i in group if items[i] not in held]
        if not group:
            continue
        kind = [(items[i], found[i]) for i in group]
        near = {n: sum(1 for item, by in kind if alike(by.get(n), item.finding)) for n in order}
        causes.append(Cause((), [items[i] for i in group], what, shared([items[i] for i in group], totals or {}),
                            near=ranked(near)))
    for c in causes:
        c.features = {t for i in c.items for t in tags(i.workload)}
    position = {id(item): n for n, item in enumerate(items)}
    return sorted(causes, key=lambda c: (not c.findings, -len(c.items), position[id(c.items[0])]))


def alike(g: Finding | None, f: Finding) -> bool:
    """The suspect goes wrong at the same step and call, under the same rule, in the same kind of way."""
    return g is not None and (g.check, g.rule, g.step, g.call) == (f.check, f.rule, f.step, f.call) and \
        change(g) == change(f)


def ranked(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """The suspects with a count, most first (at most ALSO_SHOWN)."""
    return tuple(sorted(((n, c) for n, c in counts.items() if c), key=lambda p: -p[1])[:ALSO_SHOWN])


def tags(w: Workload) -> tuple[str, ...]:
    return tuple(w.tags or workload_features(w))


def shared(group: list[Item], totals: dict[str, int]) -> tuple[str, ...]:
    """The features every corpus finding of the group has, the rarest in the corpus first."""
    corpus = [set(workload_features(i.workload)) for i in group if not i.counterexample] or \
        [set(workload_features(i.workload)) for i in group]
    if len(corpus) < 2:
        return ()  # one workload's features say nothing about the cause
    common = set.intersection(*corpus) if corpus else set()
    return tuple(sorted(common, key=lambda t: (totals.get(t, 0), t))[:COMMON_SHOWN])
