"""The number ranges of docs/wire-protocol.md cover every value the suite sends, in `check` and in `grade`.

The doc's "Numbers" table is read as data (line, field, type, range). The suite's values are
recorded where they leave it: the default profile is run through an adapter (this module's
open_target) that records every config, add, token and instance the wire adapter would send, from
every source the profile uses (golden cases, the corpus with its scale families, the exhaustive
scope, edge and scale examples, the state machine, the token-value cases, and the checks' own
second instances and ample twins); grading's runs (the corpus, its twins and probes, held-out and
exploration workloads) are read from the workloads themselves. A value outside the doc's range fails,
naming the field; so does a doc range that differs from conformance/schemas/wire-suite.schema.json.
"""

from __future__ import annotations

import ast
import importlib
import json
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import load_target
from conformance.grading.explore import generated_workloads
from conformance.grading.judge import grading_cases, run_workloads
from conformance.grading.rubric import load_rubric
from conformance.suite import run
from spec.model import Config
from spec.trace import Workload

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "wire-protocol.md"
SUITE_SCHEMA = json.loads((ROOT / "conformance" / "schemas" / "wire-suite.schema.json").read_text())
HEADER = "| line | field | type | range | why |"
CONFIG = ("num_blocks", "block_size", "max_num_seqs", "max_num_batched_tokens")
Range = tuple[int, int]


# --- the doc's table, as data -----------------------------------------------------------------------------


def doc_table(text: str) -> dict[tuple[str, str], dict[str, str]]:
    """{(line, field): {"type", "range"}} of the Numbers table; a row naming several lines gives one entry each."""
    lines = text.splitlines()
    start = lines.index(HEADER) + 2
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for row in lines[start:]:
        if not row.startswith("|"):
            break
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == 5, row
        names = re.findall(r"`([^`]+)`", cells[0]) or [cells[0]]
        field = cells[1].strip("`")
        for name in names:
            rows[(name, field)] = {"type": cells[2], "range": cells[3]}
    return rows


_OPS: dict[type, Callable[[int, int], int]] = {ast.Add: operator.add, ast.Sub: operator.sub,
                                               ast.Mult: operator.mul, ast.Pow: operator.pow}


def number(text: str) -> int:
    """An integer written the doc's way: `2^53 + 5`, `-2^53`, `-(2^64 + 1)`, `10^9 + 7`, `2^31 - 1` (^ is a power)."""
    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        raise ValueError(f"not a number the doc's way: {text!r}")
    expr = text.strip().replace("^", "**")
    if expr.startswith("-"):  # -2^53 is -(2^53), as in the doc, not (-2)^53
        expr = f"-({expr[1:]})"
    return value(ast.parse(expr, mode="eval").body)


def integer_range(cell: str) -> Range:
    """(low, high) of a range cell `1 … 2^41 + 2`, `null, or -(2^64 + 1) … 2^64 + 1`, `each -2^53 … 2^64 + 2^41`."""
    match = re.search(r"(-?[\d^ +\-*()]+?)\s*…\s*([\d^ +\-*()]+)", cell)
    assert match is not None, f"no integer range in {cell!r}"
    return number(match.group(1)), number(match.group(2))


def seq_id_pattern(cell: str) -> str:
    match = re.match(r"`([^`]+)`", cell)
    assert match is not None, f"no seq_id pattern in {cell!r}"
    return match.group(1)


# --- what the suite sends -----------------------------------------------------------------------------------


class Seen:
    """The smallest and largest value of every field, and every seq_id."""

    def __init__(self) -> None:
        self.ranges: dict[str, Range] = {}
        self.seq_ids: set[str] = set()
        self.instances = 0

    def note(self, field: str, value: int) -> None:
        low, high = self.ranges.get(field, (value, value))
        self.ranges[field] = (min(low, value), max(high, value))

    def config(self, c: Config) -> None:
        for name in CONFIG:
            self.note(f"config.{name}", getattr(c, name))
        if c.eos is not None:
            self.note("config.eos", c.eos)

    def workload(self, w: Workload) -> None:
        """Everything a run of `w` can send: its config, its requests, every token its model can sample."""
        self.config(w.config)
        for r in w.requests:
            self.add(r.seq_id, r.prompt_len, r.max_tokens)
            for k in range(r.max_tokens):
                self.note("token", w.sample(r.seq_id, tuple(range(k))))

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        self.seq_ids.add(seq_id)
        self.note("prompt_len", prompt_len)
        self.note("max_tokens", max_tokens)


RECORDED = Seen()


class _Recorded:
    """A scheduler instance of the target, recording what the wire would carry to it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def add(self, seq_id: str, prompt_len: int, max_tokens: int) -> None:
        RECORDED.add(seq_id, prompt_len, max_tokens)
        self.inner.add(seq_id, prompt_len, max_tokens)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def open_target(target: str) -> Callable[[Config, Any], _Recorded]:
    """The adapter entry point: the target's instances, each new one counted and its values recorded."""
    factory = load_target(target)

    def make(config: Config, sample: Any) -> _Recorded:
        RECORDED.instances += 1
        RECORDED.config(config)

        def recorded(seq_id: str, output: tuple[int, ...]) -> int:
            token: int = sample(seq_id, output)
            RECORDED.note("token", token)
            return token
        return _Recorded(factory(config, recorded))
    return make


@pytest.fixture(scope="module")
def checked() -> Seen:
    """What `schedcheck check --profile default` sends: the suite run on impl through the recording adapter."""
    module = importlib.import_module(__name__)  # the adapter is loaded by name: record into that module's copy
    module.RECORDED.__init__()
    report = run("impl", "default", adapter=__name__)
    assert report.verdict == "PASS", report.summary()
    return module.RECORDED


@pytest.fixture(scope="module")
def graded() -> Seen:
    """What `schedcheck grade` sends: every run of the bundled rubric's corpus, held-out and exploration workloads."""
    seen = Seen()
    _, runs = grading_cases(load_rubric())
    for w in (*run_workloads(runs), *generated_workloads("thorough")):
        seen.workload(w)
    return seen


# --- the checks ---------------------------------------------------------------------------------------------


def understated(table: dict[tuple[str, str], dict[str, str]], seen: Seen) -> list[str]:
    """Every field whose values pass the doc's range, and every seq_id its pattern does not match."""
    wrong = []
    fields = {f"config.{n}": ("new", f"config.{n}") for n in (*CONFIG, "eos")}
    fields.update(prompt_len=("add", "prompt_len"), max_tokens=("add", "max_tokens"), token=("token", "token"))
    for field, (low, high) in sorted(seen.ranges.items()):
        doc_low, doc_high = integer_range(table[fields[field]]["range"])
        if low < doc_low or high > doc_high:
            wrong.append(f"{field}: the suite sends {low} … {high}, the doc says {doc_low} … {doc_high}")
    instances = integer_range(table[("new", "instance")]["range"])
    if not (instances[0] <= 1 and seen.instances <= instances[1]):
        wrong.append(f"instance: the suite makes {seen.instances} instances, the doc says {instances}")
    pattern = seq_id_pattern(table[("add", "seq_id")]["range"])
    wrong += [f"seq_id {s!r} does not match {pattern}" for s in sorted(seen.seq_ids) if not re.fullmatch(pattern, s)]
    return wrong


@pytest.mark.long
def test_the_doc_covers_what_check_sends_under_the_default_profile(checked: Seen) -> None:
    assert checked.instances > 1000 and checked.ranges["prompt_len"][1] > 2**53  # the scale families ran
    assert understated(doc_table(DOC.read_text()), checked) == []


@pytest.mark.long
def test_the_doc_covers_what_grade_sends(graded: Seen) -> None:
    assert understated(doc_table(DOC.read_text()), graded) == []


@pytest.mark.long
def test_an_understated_range_is_caught(checked: Seen, graded: Seen) -> None:
    text = DOC.read_text()
    for old, new in (("| 1 … 2^64 + 2 |", "| 1 … 2^64 |"), ("| -(2^64 + 2) … 2^64 + 2^41 |", "| -2^64 … 2^64 + 2^41 |"),
                     ("| 1 … 2^12 + 10 |", "| 1 … 2^12 |"), ("`.{1,65538}`", "`.{1,65535}`"),
                     ("`.{1,65538}`", "`[a-z0-9+=-]{1,65538}`")):
        assert old in text, old
        assert understated(doc_table(text.replace(old, new, 1)), checked), f"{old} -> {new} went unnoticed"
    assert understated(doc_table(text.replace("| 1 … 2^11 + 9 |", "| 1 … 2^11 |", 1)), graded)  # grade's runs count


@pytest.mark.long
def test_the_replies_ranges_hold_what_the_suites_values_make(graded: Seen) -> None:
    """A reply's counters come from the sizes the suite sends: n and num_tokens reach prompt_len + max_tokens - 1
    and prompt_len + max_tokens, block counts reach num_blocks, and every output holds the suite's tokens."""
    table = doc_table(DOC.read_text())
    tokens = integer_range(table[("token", "token")]["range"])
    longest = graded.ranges["prompt_len"][1] + graded.ranges["max_tokens"][1]
    blocks = graded.ranges["config.num_blocks"][1]
    for line, field, high in (("schedule", "batch[i][1]", longest - 1),
                              ("snapshot", "snapshot.seqs.ID.num_tokens", longest),
                              ("snapshot", "snapshot.seqs.ID.num_computed", longest),
                              ("snapshot", "snapshot.blocks_used", blocks),
                              ("snapshot", "snapshot.seqs.ID.num_blocks", blocks)):
        assert integer_range(table[(line, field)]["range"])[1] >= high, (line, field)
    for key in (("sample", "sample.output"), ("snapshot", "snapshot.seqs.ID.output"), ("outputs", "outputs")):
        assert integer_range(table[key]["range"]) == tokens, key


def test_the_docs_ranges_are_the_schemas() -> None:
    """docs/wire-protocol.md and conformance/schemas/wire-suite.schema.json state the same range for every field."""
    table = doc_table(DOC.read_text())
    defs = SUITE_SCHEMA["$defs"]
    config = defs["config"]["properties"]
    schema = {("new", f"config.{n}"): (config[n]["minimum"], config[n]["maximum"]) for n in CONFIG}
    eos = config["eos"]["oneOf"][1]
    schema[("new", "config.eos")] = (eos["minimum"], eos["maximum"])
    for name in ("prompt_len", "max_tokens"):
        prop = defs["add"]["properties"][name]
        schema[("add", name)] = (prop["minimum"], prop["maximum"])
    schema[("token", "token")] = (defs["token_id"]["minimum"], defs["token_id"]["maximum"])
    schema[("new", "instance")] = (defs["instance"]["minimum"], defs["instance"]["maximum"])
    for key, bounds in schema.items():
        assert integer_range(table[key]["range"]) == bounds, key
    assert f"^{seq_id_pattern(table[('add', 'seq_id')]['range'])}$" == defs["seq_id"]["pattern"]
    for line in ("add", "schedule", "update", "snapshot", "outputs", "close"):  # one instance row names them all
        assert table[(line, "instance")] == table[("new", "instance")]
