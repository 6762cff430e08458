"""The campaign's real misses, kept as regression cases: each is a style file and a mutation id, nothing more.

A missed mutant's file is the unparsed mutant under a header that names the change, the triage
reason and the workload that shows it. ``missed_text`` writes that format for the campaign
(campaign.py ``--write-missed``) and for ``regenerate``, which makes a case from its mutation id:
``python -m conformance.selfcheck.misses DIR`` writes them all (the tests make them the same way).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

from conformance.selfcheck.mutate import Mutant, mutants
from conformance.selfcheck.triage import TRIAGE

HERE = Path(__file__).resolve().parent
STYLES_DIR = HERE / "styles"
NO_WORKLOAD = "any workload: the difference shows before the first schedule()"


@dataclass(frozen=True, slots=True)
class Miss:
    """A mutant the suite once passed, and what the campaign's differential run found for it."""

    mutant_id: str  # "<style file>:<line>:<col>:<operator>", as mutate.mutants() names it
    profile: str  # the profile it survived
    workload: str  # the smallest workload that shows it
    difference: str  # the first observation where it and its style file differ


_ONE_SEQ = ("num_blocks=1 block_size=1 max_num_seqs=1 max_num_batched_tokens=1 eos=None; "
            "arrivals r<i>(prompt_len,max_tokens)@step: r0(1,1)@1")


def _queues_differ(original: str, mutant: str) -> str:
    """The first difference of these misses: the same schedule, one queue of another type."""
    seen = "('schedule', 1, (('r0', 1),), ((), ('r0',), (), 1, 0, (('r0', (), 0, 1, 'RUNNING', 1),), ({})), 'dict')"
    return f"event 0: original {seen.format(original)} vs mutant {seen.format(mutant)}"


_TYPES = "'deque', 'list', 'list'"
MISSES: tuple[Miss, ...] = (
    Miss("dict_of_deques.py:68:15:unwrap", "quick", _ONE_SEQ, _queues_differ(_TYPES, "'deque', 'deque', 'list'")),
    Miss("functional_copy.py:79:15:unwrap", "quick", _ONE_SEQ, _queues_differ(_TYPES, "'deque', 'tuple', 'list'")),
    Miss("heap_queue.py:65:15:unwrap", "quick", _ONE_SEQ, _queues_differ(_TYPES, "'generator', 'list', 'list'")),
)


def file_name(mutant_id: str) -> str:
    """The file a missed mutant is saved as: <style>__<line>_<col>_<operator>.py."""
    style, line, col, operator = mutant_id.split(":", 3)
    return f"{style.removesuffix('.py')}__{line}_{col}_{operator.replace('#', '_')}.py"


def missed_text(m: Mutant, reason: str, profile: str, workload: str | None, difference: object) -> str:
    """A missed mutant as a standalone submission whose docstring names the bug and the workload."""
    doc = (f"Missed mutant {m.mutant_id}:\n{m.description}.\n\nWhy it is a bug: {reason}.\n"
           f"The suite passes it (profile {profile}); the original style file and docs/rules.md and "
           "docs/api.md disagree.\n")
    tree = ast.parse(m.source)
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        tree.body = tree.body[1:]
    comment = ("# ruff: noqa\n# mypy: ignore-errors\n"
               "# The code below is the unparsed mutant, one change away from its style file.\n"
               f"# Smallest workload found that shows it: {workload or NO_WORKLOAD}\n"
               f"# First difference: {difference}\n")
    return f'"""{doc}"""\n' + comment + ast.unparse(tree) + "\n"


def mutant(mutant_id: str, styles_dir: Path = STYLES_DIR) -> Mutant:
    """The mutant with this id, made again from its style file."""
    style = mutant_id.split(":", 1)[0]
    for m in mutants((styles_dir / style).read_text(), style):
        if m.mutant_id == mutant_id:
            return m
    raise KeyError(f"{style} has no mutant {mutant_id!r} any more: its style file changed; "
                   "rerun the campaign and update MISSES in conformance/selfcheck/misses.py")


def regenerate(miss: Miss) -> str:
    """The text of a stored missed case, from its style file, its mutation id and its triage reason."""
    _, reason = TRIAGE[miss.mutant_id]
    return missed_text(mutant(miss.mutant_id), reason, miss.profile, miss.workload, miss.difference)


def write(folder: Path) -> list[Path]:
    """Write every missed case into `folder`; return the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for miss in MISSES:
        path = folder / file_name(miss.mutant_id)
        path.write_text(regenerate(miss))
        paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m conformance.selfcheck.misses DIR  (writes every missed case into DIR)")
    for written in write(Path(sys.argv[1])):
        print(written)
