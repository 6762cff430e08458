"""Two known bugs at once: what explains a kind of divergence no single known bug does.

A real engine differs from the card in several ways, and at one step two of them can show
together: nano-vllm runs a step of prefills alone, and the decode step after it charges
nothing to the budget, so its batch is over the budget where neither difference alone would
be. Rule bugs are edits of spec/rules.py (spec/faults.py), so two of them whose edits touch
different text make one submission with both. For a group of findings no single suspect
explains, the pairs of a cause already named with another named cause, or with a catalog bug
that breaks the group's rule, are tried: first on SAMPLED findings of the group, then the
pairs that explained one of them on the rest.
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable, Sequence

from conformance.adapters import Factory, canonical_factory
from conformance.catalog import CATALOG
from conformance.checks.causes import SAMPLED, Item, Rerun, greedy_cover, local, stepwise
from spec import faults

JOIN = " + "  # a pair's name: both bugs, in catalog order


@functools.cache
def pair_factory(name: str) -> Factory | None:
    """A submission with both rule bugs of `name` ("a + b") planted, or None when their edits collide."""
    from conformance.mutants.build import source

    a, b = name.split(JOIN)
    try:
        text = faults.apply_edits(source(a), faults.BY_NAME[b].edits, f"pair {name!r}")
    except faults.FaultError:
        return None  # b's edit no longer finds its text once a's is made: they change the same line
    module = types.ModuleType("schedcheck_pair_" + name.replace(JOIN, "__"))
    sys.modules[module.__name__] = module  # dataclasses look their module up by name
    exec(compile(text, f"<mutants {name}>", "exec"), module.__dict__)  # noqa: S102 - our own generated source
    return canonical_factory(module)


def candidates(named: Sequence[str], rule: str, within: bool = False) -> list[str]:
    """Pairs to try on a group broken at `rule`: a named cause with another one, or with a bug that breaks the rule
    (`within`: named causes only)."""
    order = [b.name for b in CATALOG if b.name in faults.BY_NAME]
    breaks = set() if within else {b.name for b in CATALOG if rule in b.rules or rule.split(".")[0] in b.rules}
    pool = {n for n in named if n in faults.BY_NAME}
    out = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            if (a in pool and (b in pool or b in breaks)) or (b in pool and a in breaks):
                out.append(f"{a}{JOIN}{b}")
    return out


def explain_in_pairs(group: Sequence[Item], named: Sequence[str], white_box: bool, rerun: Rerun, within: bool = False,
                     make: Callable[[str], Factory | None] = pair_factory) -> list[tuple[str, list[Item]]]:
    """The pairs that explain findings of one group, chosen greedily (most findings first), with the findings each
    holds; `within`: only pairs of two `named` causes."""
    tried = candidates(named, group[0].finding.rule, within) if group else []
    explained: list[set[str]] = []
    useful: set[str] = set()
    for n, item in enumerate(group):
        names = tried if n < SAMPLED else [p for p in tried if p in useful]
        want = local(item.finding)
        fits = {p for p in names if (f := make(p)) is not None and local(stepwise(f, item, white_box, rerun)) == want}
        useful |= fits
        explained.append(fits)
    return [(pair, [group[i] for i in covered]) for pair, covered in greedy_cover(explained, tried)]

