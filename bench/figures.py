"""The measured figures README.md and docs/ quote, each read from the file its measuring command stores.

A time or count typed into a doc by hand goes stale the first time the code changes, and nobody sees it.
So each one is registered here: the words around it in its doc (a Quote, or a Block that is a command's
output verbatim), the stored measurement it is read from (a Source: a JSON file and a key in it), the
command that measures it again, and how it is written (rounding included). `python -m bench --figures`
rewrites the docs from the stored measurements, as `prove` regenerates docs/proofs.md, so after a
re-measurement nobody edits a number by hand; `python -m bench --check-figures` and tests/test_figures.py
fail when a doc and its measurement disagree, and when a doc quotes a time-like figure that is neither
registered nor ALLOWED as a constant.

Sources under bench/measured/ are written by the commands that measure them; those under
bench/measured/records/ are records of code since changed (nothing reruns them: the docs quote them as
history, and the record says when and by what command they were measured).
"""

from __future__ import annotations

import json
import re
import string
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import Path
from typing import Any

from bench.checktime import render_check_times
from bench.report import render as render_bench

ROOT = Path(__file__).resolve().parents[1]
MEASURED = "bench/measured"
REWRITE = "python -m bench --figures"


# --- what a figure is ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    """A stored measurement: a JSON file, the command that measures it again, and the key that dates it."""

    name: str
    path: str
    command: str
    record: bool = False  # a record of code since changed: the command is how it was measured, not a rerun
    date_key: str | None = "measured"


@dataclass(frozen=True)
class Figure:
    """One measured number in a doc: where it is quoted, the stored value it is, and how it is written.

    key: a path into the sources' JSON, the source's name first (`bench.results[workload=W1].impl_over_floor`;
    `[k=v]` picks the list items whose k matches the pattern v, every match when v has a `*`), or min(path),
    max(path), or a ratio `a/b` of two of those or of one and a number. fmt: a Python format spec, or one of
    FORMATS. A list (a `*` without min or max) is written item by item, joined by ", ".
    """

    doc: str
    quote: str
    sources: tuple[Source, ...]
    key: str
    fmt: str

    @property
    def many(self) -> bool:
        return "*" in self.key and not self.key.startswith(("min(", "max("))


@dataclass(frozen=True)
class Quote:
    """A stretch of a doc with figures in it, written with `{key:fmt}` where each figure stands.

    The literal words pin where it is (it must occur exactly once); a run of spaces matches any run of
    white space, a line break included, and `…` any text within one line (a table's long cells).
    """

    doc: str
    template: str

    @cached_property
    def parts(self) -> tuple[tuple[str, ...], tuple[Figure, ...]]:
        """The literal text between the figures (one more than the figures) and the figures."""
        literals, figures = [""], []
        for literal, key, fmt, _ in string.Formatter().parse(self.template):
            literals[-1] += literal  # "{{" splits a literal in two
            if key is not None:
                figures.append(Figure(self.doc, self.template, sources_of(key), key, fmt or ""))
                literals.append("")
        return tuple(literals), tuple(figures)

    @property
    def figures(self) -> tuple[Figure, ...]:
        return self.parts[1]

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        literals, figures = self.parts
        out = [_literal(literals[0])]
        for i, f in enumerate(figures):
            out += [f"(?P<f{i}>{_slot(f)})", _literal(literals[i + 1])]
        return re.compile("".join(out))


@dataclass(frozen=True)
class Block:
    """A fenced block of a doc that is a command's output verbatim (its first line pins it); rewritten whole."""

    doc: str
    first_line: str
    source: Source
    render: Callable[[Any], str]

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(r"^```[^\n]*\n(?P<body>" + re.escape(self.first_line) + r".*?)\n```", re.M | re.S)


@dataclass(frozen=True)
class Allowed:
    """A time-like figure that measures nothing (a limit, a budget, a target, a definition): not registered."""

    doc: str  # a page, or "*" for every page
    pattern: str  # a regular expression for the figure with the words that make it a constant; a space: any
    reason: str


@dataclass(frozen=True)
class Problem:
    """What a check found, said so that the reader knows what to run or edit next."""

    doc: str
    snippet: str
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Change:
    """A figure `rewrite` changed: the doc, the text it had and the text it has now."""

    doc: str
    old: str
    new: str
    where: str


# --- how a figure is written -----------------------------------------------------------------------------------

NUMBER = r"-?\d[\d,]*(?:\.\d+)?"


def _min_s(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s"


FORMATS: dict[str, tuple[Callable[[Any], str], str]] = {  # name: (how a value is written, what that looks like)
    "min_s": (_min_s, r"\d+(?:\s+min\s+\d+)?\s+s"),  # 196 -> "3 min 16 s", 49.6 -> "50 s"
    "min": (lambda v: f"{v / 60:.0f}", NUMBER),  # seconds as whole minutes: 152.3 -> "3"
    "min.1": (lambda v: f"{v / 60:.1f}", NUMBER),  # seconds as minutes to a tenth: 152.3 -> "2.5"
    "r10": (lambda v: f"{round(v, -1):.0f}", NUMBER),  # "about 40 s": to the nearest ten
    "date": (str, r"\d{4}-\d{2}-\d{2}"),
    "commit": (str, r"[0-9a-f]{7,40}(?:\+changes)?"),  # a run on uncommitted changes says so
}


def written(value: Any, fmt: str) -> str:
    """A value as the doc writes it; a list item by item, joined by ", "."""
    if isinstance(value, list):
        return ", ".join(written(v, fmt) for v in value)
    if fmt in FORMATS:
        return FORMATS[fmt][0](value)
    return format(value, fmt)


def _slot(f: Figure) -> str:
    one = FORMATS[f.fmt][1] if f.fmt in FORMATS else NUMBER
    return f"{one}(?:,\\s+{one})*" if f.many else one


def _literal(text: str) -> str:
    out = []
    for piece in re.split(r"(\s+|…)", text):
        out.append(r"\s+" if piece.isspace() else r"[^\n]*?" if piece == "…" else re.escape(piece))
    return "".join(out)


def _same(a: str, b: str) -> bool:
    return a.split() == b.split()


# --- reading a stored value ------------------------------------------------------------------------------------

SEGMENT = re.compile(r"(\w+)(?:\[(\w+)=([^\]]+)\])?$")


class Missing(LookupError):
    """A key that a source does not have."""


def sources_of(key: str) -> tuple[Source, ...]:
    """The sources a figure's key reads, first its numerator's; an unknown name fails at import."""
    names = [t.split(".")[0] for t in _terms(key) if not _is_number(t)]
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise ValueError(f"figure key {key!r} names no source {unknown}; known: {', '.join(SOURCES)}")
    return tuple(dict.fromkeys(SOURCES[n] for n in names))


def _terms(key: str) -> list[str]:
    return [re.sub(r"^(?:min|max)\((.*)\)$", r"\1", t) for t in key.split("/")]


def _is_number(term: str) -> bool:
    return re.fullmatch(r"\d+(?:\.\d+)?", term) is not None


def _path(data: Any, path: str, every: bool = False) -> Any:
    """The value at path; with every (under min or max), a list of every item its filters pick."""
    values, many = [data], every
    for part in path.split("."):
        m = SEGMENT.match(part)
        if m is None:
            raise ValueError(f"bad key segment {part!r}")
        name, field, pattern = m.groups()
        try:
            values = [v[name] for v in values]
        except (KeyError, TypeError):
            raise Missing(part) from None
        if field is not None:
            try:
                picked = [e for v in values for e in v if fnmatchcase(str(e[field]), pattern)]
            except (KeyError, TypeError):
                raise Missing(part) from None
            if not picked or not (many or "*" in pattern or len(picked) == len(values)):
                raise Missing(f"{part} ({len(picked)} items match)")
            many, values = many or "*" in pattern, picked
    return values if many else values[0]


class Store:
    """The stored measurements under one root, each file read once."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root
        self._data: dict[str, Any] = {}

    def data(self, source: Source) -> Any:
        if source.path not in self._data:
            self._data[source.path] = json.loads((self.root / source.path).read_text())
        return self._data[source.path]

    def value(self, key: str) -> Any:
        """A figure's value: its path, min or max, or a ratio, lists item by item."""
        terms = key.split("/")
        values = [self._term(t) for t in terms]
        if len(values) == 1:
            return values[0]
        a, b = values
        if isinstance(a, list):
            return [x / b for x in a]
        return a / b

    def _term(self, term: str) -> Any:
        if _is_number(term):
            return float(term)
        agg = re.fullmatch(r"(min|max)\((.*)\)", term)
        inner = agg.group(2) if agg else term
        name, _, path = inner.partition(".")
        got = _path(self.data(SOURCES[name]), path, every=agg is not None)
        if agg:
            return (min if agg.group(1) == "min" else max)(got)
        return got

    def when(self, source: Source) -> str:
        """When and how a source was measured, as a message says it."""
        try:
            day = _path(self.data(source), source.date_key) if source.date_key else None
        except Missing:
            day = None
        how = f"by `{source.command}`" + (" (a record of code since changed)" if source.record else "")
        return f"measured {day} {how}" if day else f"undated, {how}"


def stamp() -> dict[str, str]:
    """When and on what code a measurement was made, for the file that stores it (and the docs' dates)."""
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True, check=False).stdout.strip()
    commit = done.stdout.strip() if done.returncode == 0 else "unknown"
    return {"measured": date.today().isoformat(), "commit": commit + ("+changes" if dirty else "")}


def store(path: str, data: dict[str, Any], root: Path = ROOT) -> Path:
    """Write a measurement where the figures read it (path relative to root)."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return target


# --- the sources -----------------------------------------------------------------------------------------------

def _record(name: str, file: str, command: str) -> Source:
    return Source(name, f"{MEASURED}/records/{file}", command, record=True)


SOURCES: dict[str, Source] = {s.name: s for s in (
    Source("tests", f"{MEASURED}/tests.json", "python -m bench --test-time"),
    Source("bench", "bench/results.json", "python -m bench --json bench/results.json"),
    Source("bench_quick", f"{MEASURED}/bench-quick.json", "python -m bench --quick"),
    Source("throughput", f"{MEASURED}/throughput-course.json",
           "python -m bench --grade-throughput --class course --copies 2 --jobs 2"),
    Source("check_time", f"{MEASURED}/check-time.json",
           "python -m bench --check-time quick,default --targets impl,reference,spec"),
    Source("proofs_quick", "spec/bounded/results-quick.json", "python -m conformance prove --quick --write-results",
           date_key=None),
    Source("proofs", "spec/bounded/results.json", "python -m conformance prove --write-results", date_key=None),
    _record("throughput_1201", "throughput-2026-12-01.json",
            "python -m bench --grade-throughput --class course, then --class catalog"),
    _record("throughput_1202", "throughput-2026-12-02.json", "python -m bench --grade-throughput --class course"),
    _record("throughput_cut", "throughput-cut-2026-12-02.json",
            "python -m bench --grade-throughput --class course (and --class catalog), before and after 9aa8e67"),
    _record("probe_black_box", "probe-black-box-2026-12-05.json",
            "run_corpus_sandboxed on impl's public runs, before and after 757ba53"),
    _record("throughput_black_box", "throughput-black-box-2026-12-05.json",
            "python -m bench --grade-throughput --class course --copies 2 --jobs 2"),
    _record("throughput_held", "throughput-held-2026-12-05.json",
            "python -m bench --grade-throughput --class course --copies 2 --jobs 2"),
    _record("throughput_cache_short", "throughput-cache-short-2026-12-05.json",
            "python -m bench --grade-throughput --class course --copies 2 --jobs 2"),
    _record("grade_stages", "grade-stages-2026-12-06.json",
            "grade_one of each file timed in one process, one entry at a time, at three commits"),
    _record("throughput_reach", "throughput-reach-2026-12-03.json",
            "python -m bench --grade-throughput --class course --copies 2 --jobs 2, and impl's runs timed one part "
            "at a time"),
    _record("check_time_thorough", "check-time-2026-11-29.json",
            "python -m bench --check-time thorough --targets impl"),
    _record("check_time_profiles", "check-time-2026-12-01.json",
            "python -m bench --check-time quick,default,thorough --targets impl,reference,spec"),
    _record("grade_scale", "grade-scale-2026-12-02.json", "schedcheck grade of impl, timed per submission"),
    _record("ubuntu", "ubuntu-2026-12-01.json", "sudo python -m pytest -m ubuntu tests/gradescope"),
    _record("nanovllm", "nanovllm-2026-12-02.json",
            "schedcheck check ~/.cache/schedcheck/nano-vllm --adapter conformance.engines.nanovllm per profile, "
            "and bash tests/external/run.sh nanovllm"),
    _record("vllm", "vllm-2026-12-02.json",
            "schedcheck check --adapter conformance.engines.vllm per profile and policy, and "
            "bash tests/external/run.sh vllm"),
    _record("nanovllm_1205", "nanovllm-2026-12-05.json",
            "schedcheck check ~/.cache/schedcheck/nano-vllm --adapter conformance.engines.nanovllm per profile, "
            "and bash tests/external/run.sh nanovllm"),
    _record("nanovllm_causes", "nanovllm-causes-2026-12-05.json",
            "schedcheck check ~/.cache/schedcheck/nano-vllm --adapter conformance.engines.nanovllm per profile, "
            "and bash tests/external/run.sh nanovllm, after the adapter stated nano-vllm's differences"),
    _record("sglang", "sglang-2026-12-05.json",
            "schedcheck check sglang --adapter conformance.engines.sglang per profile, and "
            "bash tests/external/run.sh sglang"),
    _record("vllm_outside", "vllm-independent-2026-12-05.json",
            "schedcheck check vllm --adapter tests.external.independent.blind_vllm per option and policy, and "
            "bash tests/external/run.sh vllm-independent"),
    _record("vllm_1205", "vllm-2026-12-05.json",
            "schedcheck check vllm --adapter 'conformance.engines.vllm?reserve_full_isl=0' per policy and profile"),
    _record("hangs", "hangs-2026-12-01.json", "schedcheck check on a submission that loops forever"),
    _record("reach_bugs", "reach-bugs-2026-12-05.json",
            "schedcheck check on each bug of tests/conformance/unseen/ past a threshold, quick and default"),
    _record("diagnosis_work", "diagnosis-work-2026-12-05.json",
            "schedcheck grade on the bugs of tests/conformance/unseen/ that fail only long runs, alone"),
    _record("reach_cost", "reach-cost-2026-12-02.json",
            "taskset -c 1 schedcheck check impl, and python -m bench --check-time quick,default --targets impl"),
    _record("selfcheck", "selfcheck-2026-12-01.json", "python -m conformance.selfcheck (the mutation campaign)"),
    _record("kill_times", "kill-times-2026-12-01.json",
            "schedcheck check on each catalog mutant, quick and default, the counterexamples family left out"),
    _record("mutmut", "mutmut-2026-11-29.json", "mutmut run on impl/scheduler.py (mutmut 3.8.1)"),
    _record("wire", "wire-2026-11-29.json",
            "schedcheck check impl and --wire examples/wire/scheduler.py and .js, --profile quick"),
)}


# --- the figures -----------------------------------------------------------------------------------------------

README, BENCH, GRADING, ENGINES, CONFORMANCE, WIRE = (
    "README.md", "docs/bench.md", "docs/grading.md", "docs/engines.md", "docs/conformance.md", "docs/wire-protocol.md")
W1, W2, W3, F = ("bench.results[workload=W1]", "bench.results[workload=W2]", "bench.results[workload=W3]",
                 "bench.results[workload=F*]")


def _throughput_row(row: str) -> str:
    """A row of a throughput table: wall, per minute, CPU s each (grader, sandboxes (machine)), in process, ratio."""
    return (f"{{{row}.wall:.1f}} s | **{{{row}.per_minute:.1f}}** | {{{row}.grader_cpu:.2f}}, "
            f"{{{row}.sandbox_cpu:.2f}} ({{{row}.machine_cpu:.2f}}) | {{{row}.in_process_per_minute:.1f}}, "
            f"{{{row}.in_process_cpu:.2f}} | "
            f"{{{row}.overhead:.2f}}x | {{{row}.load:.2f}} |")


def _cut_row(code: str, run: str, bold: bool) -> str:
    """A row of the table of the grader's cuts (2026-12-02); its per-minute figure is bold after the cut."""
    row, b = f"throughput_cut.rows[run={run}]", "**" if bold else ""
    return (f"| {code} | {{{row}.wall:.1f}} s | {b}{{{row}.per_minute:.1f}}{b} | {{{row}.grader_cpu:.2f}}, "
            f"{{{row}.sandbox_cpu:.2f}} ({{{row}.machine_cpu:.2f}}) | {{{row}.in_process_per_minute:.1f}}, "
            f"{{{row}.in_process_cpu:.2f}} | {{{row}.overhead:.2f}}x | {{{row}.load:.1f}} |")


def _reach_bug(name: str) -> str:
    """A row of the bugs past a threshold: CPU seconds of the check under quick and default."""
    return f"| {name} | …, {{reach_bugs.{name}.quick:,}} s | …, {{reach_bugs.{name}.default:,}} s |"


def _reach_bug_default(name: str) -> str:
    """A row of a bug past quick's reach: only default finds it."""
    return f"| {name} | … | PASS | …, {{reach_bugs.{name}.default:,}} s |"


QUOTES: tuple[Quote, ...] = (
    # README.md
    Quote(README, "every claim at small bounds (N=2, K=3): {proofs_quick.wall_seconds:.0f} s on 2 cores; CI runs it"),
    Quote(README, "model check of 3 requests; {proofs.wall_seconds:min} min measured on 2 cores"),
    Quote(README, "`python -m bench --json bench/results.json` (about {bench.seconds:min.1} minutes; `--quick` about "
                  "{bench_quick.seconds:r10} s) measured"),
    Quote(README, f"**{{{W1}.impl_over_floor:.2f}}x the floor** per step on W1"),
    Quote(README, f"**{{{W2}.impl_over_floor:.2f}}x** on W2 (5,000 requests, lognormal lengths, "
                  f"{{{W2}.steps_with_preemption_pct:.1f}}% of steps preempt)"),
    Quote(README, f"The pure spec is {{{W1}.spec_over_impl:.0f}}x (W1) and {{{W2}.spec_over_impl:.0f}}x (W2) slower"),
    Quote(README, f"costs {{min({F}.impl.ns_per_seq):r10}}-{{max({F}.impl.ns_per_seq):r10}} ns per sequence"),
    Quote(README, "twice over: {throughput.submissions:,} submissions) at **{throughput.per_minute:.1f} "
                  "submissions per minute** on {throughput.cpus:,} cores"),
    Quote(README, "(`python -m bench --grade-throughput`, {throughput.measured:date})"),
    Quote(README, "({throughput.runs_per_submission:,} runs a submission instead of {throughput_reach.before.runs:,},"),
    Quote(README, "checks in process, with no sandbox, give {throughput.in_process_per_minute:.1f} per minute"),
    Quote(README, "a class takes {throughput_reach.before.per_minute/throughput.per_minute:.1f} times as long as the "
                  "{throughput_reach.before.per_minute:.1f} per minute the code before measured"),
    Quote(README, "process): {tests.default.passed:,} tests in {tests.default.seconds:min_s} on {tests.cpus:,} cores "
                  "({tests.measured:date})."),
    Quote(README, "# the {tests.long.passed:,} end-to-end tests the default run leaves out: {tests.long.seconds:min_s} "
                  "(CI runs them)"),

    # docs/bench.md: the benchmark
    Quote(BENCH, "python -m bench --quick # about {bench_quick.seconds:r10} s: 5 runs"),
    Quote(BENCH, "runs of thousands of steps took {diagnosis_work.impl_recursive_steps.before:.1f} and "
                 "{diagnosis_work.impl_compaction_1024.before:.1f} s to grade alone, "
                 "{diagnosis_work.impl_recursive_steps.after:.1f} and "
                 "{diagnosis_work.impl_compaction_1024.after:.1f} s after)"),
    Quote(BENCH, "python -m bench --json bench/results.json # about {bench.seconds:min} min: 7 runs"),
    Quote(BENCH, f"16,000 blocks: preemption in {{{W2}.steps_with_preemption_pct:.1f}}% of steps"),
    Quote(BENCH, "`python -m bench --json bench/results.json` took {bench.seconds:min_s} (`--quick`: about "
                 "{bench_quick.seconds:r10} s)."),
    Quote(BENCH, f"- **impl/floor**: W1 {{{W1}.impl_over_floor:.2f}} and W2 {{{W2}.impl_over_floor:.2f}}, both within "
                 f"the 1.5x target (W3 {{{W3}.impl_over_floor:.2f}}, F {{min({F}.impl_over_floor):.2f}} to "
                 f"{{max({F}.impl_over_floor):.2f}})."),
    Quote(BENCH, f"- **spec/impl**: W1 {{{W1}.spec_over_impl:.0f}}x and W2 {{{W2}.spec_over_impl:.0f}}x, with"),
    Quote(BENCH, f"sequence stays flat ({{{F}.impl.ns_per_seq:.0f}}), and so does impl/floor"),
    Quote(BENCH, f"per sequence grows with n ({{{F}.spec.ns_per_seq/1000:.0f}} us)"),
    # docs/bench.md: check time
    Quote(BENCH, "within the budgets (quick {min(check_time.rows[profile=quick].cpu_seconds):.1f}-"
                 "{max(check_time.rows[profile=quick].cpu_seconds):.1f} s of 10, default "
                 "{min(check_time.rows[profile=default].cpu_seconds):.1f}-"
                 "{max(check_time.rows[profile=default].cpu_seconds):.1f} s of 30)."),
    Quote(BENCH, "(before that stage, impl took {check_time_thorough.impl_seconds:,} s)."),
    # docs/bench.md: grading throughput, oldest first
    Quote(BENCH, "otherwise idle (load average {throughput_1201.load_low:.1f}-{throughput_1201.load_high:.1f}, "
                 "the grader's own):"),
    Quote(BENCH, "| course | {throughput_1201.course.submissions:,} | {throughput_1201.course.wall:.1f} s | "
                 "**{throughput_1201.course.per_minute:.1f}** | {throughput_1201.course.machine_cpu:.2f} | "
                 "{throughput_1201.course.in_process_per_minute:.1f}, {throughput_1201.course.in_process_cpu:.2f} | "
                 "{throughput_1201.course.overhead:.2f}x |"),
    Quote(BENCH, "| catalog | {throughput_1201.catalog.submissions:,} | {throughput_1201.catalog.wall:.1f} s | "
                 "{throughput_1201.catalog.per_minute:.1f} | {throughput_1201.catalog.machine_cpu:.2f} | "
                 "{throughput_1201.catalog.in_process_per_minute:.1f}, {throughput_1201.catalog.in_process_cpu:.2f} | "
                 "{throughput_1201.catalog.overhead:.2f}x |"),
    Quote(BENCH, "slowly (`prove --quick` {throughput_1202.prove_quick_slow:,} s against "
                 "{throughput_1202.prove_quick_fast:,} s, the default tests {throughput_1202.tests_slow:,} s against "
                 "{throughput_1202.tests_fast:,} s), after the probe question was added (one round trip per workload): "
                 "course class {throughput_1202.submissions:,} submissions in {throughput_1202.wall:.1f} s, "
                 "**{throughput_1202.per_minute:.1f} per minute**, {throughput_1202.machine_cpu:.2f} machine-CPU s "
                 "each; in process {throughput_1202.in_process_per_minute:.1f} per minute, "
                 "{throughput_1202.in_process_cpu:.2f} CPU s each; sandboxed / in process "
                 "{throughput_1202.overhead:.2f}x."),
    Quote(BENCH, "`python -m bench --grade-throughput --class course` ({throughput_cut.submissions:,} submissions;"),
    Quote(BENCH, " ".join(_cut_row(code, run, bold) for code, run, bold in (  # one quote: its "after" rows look alike
        ("before", "before", False), ("after", "after-1", True), ("after", "after-2", True)))),
    Quote(BENCH, "less CPU per submission ({throughput_cut.rows[run=before].machine_cpu:.2f} s before, "
                 "{min(throughput_cut.rows[code=after].machine_cpu):.2f}-"
                 "{max(throughput_cut.rows[code=after].machine_cpu):.2f} after: the grader's own processes "
                 "{throughput_cut.grader_less_pct:,}% less, the sandboxes' trees "
                 "{throughput_cut.sandbox_less_pct_low:,}-{throughput_cut.sandbox_less_pct_high:,}% less), and a "
                 "class goes "
                 "{min(throughput_cut.rows[code=after].per_minute)/throughput_cut.rows[run=before].per_minute:.2f}-"
                 "{max(throughput_cut.rows[code=after].per_minute)/throughput_cut.rows[run=before].per_minute:.1f} "
                 "times as fast. Busier, the same machine gave before {throughput_cut.busier.before_low:.1f}-"
                 "{throughput_cut.busier.before_high:.1f} per minute and after {throughput_cut.busier.after_low:.1f}-"
                 "{throughput_cut.busier.after_high:.1f} (load averages {throughput_cut.busier.load_low:,} to "
                 "{throughput_cut.busier.load_high:.1f} from other jobs"),
    Quote(BENCH, "commit {throughput_cut.intermediate.commit:commit} gave {throughput_cut.intermediate.per_minute:.1f} "
                 "per minute (load {throughput_cut.intermediate.load:.2f}). The in-process baseline got faster still "
                 "({throughput_cut.rows[run=before].in_process_cpu:.2f} to "
                 "{throughput_cut.rows[run=after-1].in_process_cpu:.2f} CPU s each)"),
    Quote(BENCH, "The catalog class, after: {throughput_cut.catalog.submissions:,} submissions in "
                 "{throughput_cut.catalog.wall:.1f} s, {throughput_cut.catalog.per_minute:.1f} per minute "
                 "({throughput_cut.catalog.before_per_minute:.1f} before, at load "
                 "{throughput_cut.catalog.before_load:.1f}), {throughput_cut.catalog.grader_cpu:.2f} and "
                 "{throughput_cut.catalog.sandbox_cpu:.2f} CPU s each."),
    Quote(BENCH, "| before the reach tiers | {throughput_reach.before.runs:,} | "
                 + _throughput_row("throughput_reach.before")),
    Quote(BENCH, "| with them | {throughput_reach.with_them.runs:,} | "
                 + _throughput_row("throughput_reach.with_them")),
    Quote(BENCH, "| each scheduler of a group alone black box and once (8e52960) | "
                 "{throughput_reach.group_alone.runs:,} | " + _throughput_row("throughput_reach.group_alone")),
    Quote(BENCH, "in a run of their own (260340e and later; last: {throughput_held.commit:commit}, "
                 "{throughput_held.measured:date}) | {throughput_held.runs:,} | " + _throughput_row("throughput_held")),
    Quote(BENCH, "impl's public runs cost its child {probe_black_box.after.child:.1f} s of CPU instead of "
                 "{probe_black_box.before.child:.2f}, and the grader {probe_black_box.after.parent:.2f} s instead of "
                 "{probe_black_box.before.parent:.2f}."),
    Quote(BENCH, "| the runs a probe is compared with black box, as `check` makes them, and a class's runs prepared "
                 "once (757ba53; {throughput_black_box.commit:commit}, {throughput_black_box.measured:date}) | "
                 "{throughput_black_box.runs:,} | " + _throughput_row("throughput_black_box")),
    Quote(BENCH, "| with a cache one block short at every threshold (c477d54) and three more bugs written from outside "
                 "in the class ({throughput_cache_short.submissions:,} submissions; "
                 "{throughput_cache_short.commit:commit}, {throughput_cache_short.measured:date}) | "
                 "{throughput_cache_short.runs:,} | " + _throughput_row("throughput_cache_short")),
    Quote(BENCH, "| with the crowds and turnover runs to 2^12 + 1 requests, the group made one scheduler a step, "
                 "a run's CPU limit grown with its requests, and the child's job frozen out of the collector's sight "
                 "({throughput.submissions:,} submissions; latest: {throughput.commit:commit}, "
                 "{throughput.measured:date}) | "
                 "{throughput.runs_per_submission:,} | {throughput.grade_wall_seconds:.1f} s | "
                 "**{throughput.per_minute:.1f}** | {throughput.grader_cpu_seconds_per_submission:.2f}, "
                 "{throughput.sandbox_cpu_seconds_per_submission:.2f} "
                 "({throughput.machine_cpu_seconds_per_submission:.2f}) | {throughput.in_process_per_minute:.1f}, "
                 "{throughput.in_process_cpu_seconds_per_submission:.2f} | {throughput.overhead:.2f}x | "
                 "{throughput.load_average_1min:.2f} |"),
    Quote(BENCH, "a correct submission went from {grade_stages.entries.style_heap_queue.before:.1f} s to "
                 "{grade_stages.entries.style_heap_queue.with_them:.1f} s"),
    Quote(BENCH, "read after every call, through the turnover runs: "
                 "{grade_stages.entries.cpp_finished_default.before:.1f} s to "
                 "{grade_stages.entries.cpp_finished_default.with_them:.0f} s; a float chunk, "
                 "{grade_stages.entries.impl_float_chunk.before:.1f} s to "
                 "{grade_stages.entries.impl_float_chunk.with_them:.0f} s)"),
    Quote(BENCH, "in process, with no sandbox, the same checks take "
                 "{throughput.in_process_cpu_seconds_per_submission:.2f} CPU s a submission "
                 "({throughput.in_process_per_minute:.1f} per minute)"),
    Quote(BENCH, "against {throughput.overhead:.2f} times that wall time sandboxed"),
    Quote(BENCH, "took a correct submission's grade from {grade_stages.entries.style_heap_queue.with_them:.1f} s to "
                 "{grade_stages.entries.style_heap_queue.frozen:.1f} s and two of the slowest from "
                 "{grade_stages.entries.impl_crc32_slots.with_them:.0f} s to "
                 "{grade_stages.entries.impl_crc32_slots.frozen:.0f} s and from "
                 "{grade_stages.entries.impl_float_chunk.with_them:.0f} s to "
                 "{grade_stages.entries.impl_float_chunk.frozen:.0f} s"),
    Quote(BENCH, "({throughput_reach.with_them.in_process_cpu/throughput_reach.before.in_process_cpu:.1f} times the "
                 "CPU in process, {throughput_reach.with_them.machine_cpu/throughput_reach.before.machine_cpu:.1f} "
                 "times sandboxed). Of a correct submission's {throughput_reach.parts.sandboxed:.1f} s of sandboxed "
                 "runs (measured one part at a time, impl), the {throughput_reach.parts.alone_runs:,} schedulers that "
                 "run alone to be compared with the group of 1,025 alive at once take "
                 "{throughput_reach.parts.alone:.1f} s, the group runs {throughput_reach.parts.group:.1f} s and the "
                 "{throughput_reach.parts.single_runs:,} single reach cases {throughput_reach.parts.single:.1f} s; in "
                 "process the longest reach cases are the run of 2,049 idle steps "
                 "({throughput_reach.parts.idle_run:.2f} s with its judges), the crowd of 2,049 requests "
                 "({throughput_reach.parts.crowd_2049:.2f} s) and the crowd of 1,024 "
                 "({throughput_reach.parts.crowd_1024:.2f} s)."),
    Quote(BENCH, "(`col_int32_clamp`: {throughput_reach.col_int32_clamp.before:,} s to grade, "
                 "{throughput_reach.col_int32_clamp.after:,} s after)."),
    Quote(BENCH, "an output list in C ({throughput_1201.child_time_less:.1f}x less child time)"),
    Quote(BENCH, "one by one ({throughput_1201.dashboard_before:,} s per class run before, "
                 "{throughput_1201.dashboard_after:.1f} s now:"),
    Quote(BENCH, "({throughput_cut.collection.before:.1f} s of collection per "
                 "{throughput_cut.collection.submissions:,} submissions, {throughput_cut.collection.after:.1f} s "
                 "after)."),
    Quote(BENCH, "(a reading of a {throughput_cut.proctree.processes:,}-process tree took "
                 "{throughput_cut.proctree.before_us:,} µs, and strays another walk; now "
                 "{throughput_cut.proctree.after_us:,} µs, and none)."),
    Quote(BENCH, "({throughput_cut.driver_less_pct:,}% less driver time)"),
    Quote(BENCH, "({throughput_cut.imports_before_ms:,} to {throughput_cut.imports_after_ms:,} ms of imports per child "
                 "start,"),
    Quote(BENCH, "({throughput_cut.judging_less_pct:,}% less judging for a bug"),

    # docs/grading.md
    Quote(GRADING, "One submission, with the default rubric, is {throughput.runs_per_submission:,} sandboxed runs: "
                   "{throughput.cases_per_submission:,} cases and their probe runs, the reach tiers' included (1,025 "
                   "schedulers alone and the two groups), measured {throughput.measured:date}."),
    Quote(GRADING, "was measured before the reach tiers were graded, on {grade_scale.runs:,} runs: "
                   "{grade_scale.cases:,} cases and their probe runs (of which {grade_scale.two_instance_runs:,} are "
                   "the two-instance probes, the runs of their second instance alone and the state machine's runs). "
                   "Measured on impl on this 2-core machine while it was shared (load {grade_scale.load_low:,} to "
                   "{grade_scale.load_high:,}): a grade takes {grade_scale.now.wall_low:.1f} to "
                   "{grade_scale.now.wall_high:.1f} s of wall time once the class's pure work is cached (first grade "
                   "of a process {grade_scale.now.first_low:,} to {grade_scale.now.first_high:,} s), with "
                   "{grade_scale.now.child_cpu_low:.1f} to {grade_scale.now.child_cpu_high:.1f} s of CPU in the "
                   "sandbox child and {grade_scale.now.grader_cpu_low:.1f} to {grade_scale.now.grader_cpu_high:.1f} s "
                   "in the grader; before the probes and the machine's runs were added, "
                   "{grade_scale.before.wall_low:.1f} to {grade_scale.before.wall_high:.1f} s, "
                   "{grade_scale.before.child_cpu_low:.1f} to {grade_scale.before.child_cpu_high:.1f} s and "
                   "{grade_scale.before.grader_cpu_low:.1f} to {grade_scale.before.grader_cpu_high:.1f} s."),
    Quote(GRADING, "Both releases pass ({ubuntu.tests:,} tests, about {ubuntu.minutes:,} minutes with the userlands "
                   "cached)"),

    # docs/engines.md
    Quote(ENGINES, "`quick` {nanovllm_causes.quick.wall:.1f} s wall (the suite's own\n"
                   "count {nanovllm_causes.quick.suite:.1f} s), `default` {nanovllm_causes.default.wall:.1f} s "
                   "({nanovllm_causes.default.suite:.1f} s); the {nanovllm_causes.external_tests.count:,} external "
                   "tests {nanovllm_causes.external_tests.pytest:,} s (pytest's count); `run.sh nanovllm`\n"
                   "{nanovllm_causes.run_sh.after:,} s with the virtualenv made."),
    Quote(ENGINES, "causes: {nanovllm_causes.causes:,}, over {nanovllm_causes.failing_vectors:,} failing corpus "
                   "vectors "
                   "and the counterexamples (...)\n  1. engine difference block-size-1"),
    Quote(ENGINES, "each alone: `quick` {sglang.quick.wall:.1f} s wall (the suite's own\ncount "
                   "{sglang.quick.suite:.1f} s), `default` {sglang.default.wall:.1f} s ({sglang.default.suite:.1f} s); "
                   "the {sglang.external_tests.count:,} external tests {sglang.external_tests.pytest:,} s (pytest's "
                   "count); `run.sh sglang` {sglang.run_sh.after:,} s with\nthe virtualenv made, and "
                   "{sglang.run_sh.made:,} s"),
    Quote(ENGINES, "causes: {sglang.causes:,}, over {sglang.failing_vectors:,} failing corpus vectors and the "
                   "counterexamples (...)\n  1. engine difference admission-reserve"),
    Quote(ENGINES, "with vLLM's defaults PASS under `vllm-v1` ({vllm_outside.defaults_v1.suite:.1f} s by\nthe suite's "
                   "count); with `?reserve_full_isl=false` PASS under `vllm-v1:reserve_full_isl=false` "
                   "({vllm_outside.reserve_off.suite:.1f} s); under\n`p07` FAIL with one cause each, `policy:vllm-v1` "
                   "({vllm_outside.defaults_p07.failing:,} failing vectors) and `no_admission_after_preemption`\n"
                   "({vllm_outside.reserve_off_p07.failing:,})"),
    Quote(ENGINES, "checks this ({vllm_outside.tests.count:,}\ntests, {vllm_outside.tests.pytest:,} s)"),
    Quote(ENGINES, "diagnosis, `quick` took {nanovllm.quick.wall:.1f} s wall and `thorough` took "
                   "{nanovllm.thorough.suite:.1f} s by the suite's count"),
    Quote(ENGINES, "2^20 take {nanovllm.blocks_2_20_seconds:.1f} s to build"),
    Quote(ENGINES, "Measured on the 2-core development machine: {vllm.env.disk_gb:.1f} GB on disk (vllm "
                   "{vllm.env.vllm_gb:.2f} GB, torch {vllm.env.torch_gb:.2f} GB), made in {vllm.env.minutes:,} "
                   "minutes"),
    Quote(ENGINES, "with the command's restart of itself and vLLM's import, {vllm.start_low:,}-{vllm.start_high:,} s "
                   "per process"),
    Quote(ENGINES, "| quick | vllm-v1 | PASS: every check, white box included, {vllm.quick_v1.runs:,} runs; "
                   "{vllm.quick_v1.left_out:,} corpus vectors left out (sizes, below) | {vllm.quick_v1.wall:.1f} s "
                   "({vllm.quick_v1.suite:.1f} s) |"),
    Quote(ENGINES, "| default | vllm-v1 | PASS: {vllm.default_v1.runs:,} runs | {vllm.default_v1.wall:.1f} s "
                   "({vllm.default_v1.suite:.1f} s) |"),
    Quote(ENGINES, "| thorough | vllm-v1 | PASS: {vllm.thorough_v1.runs:,} runs, "
                   "{vllm.thorough_v1.state_machine_runs:,} state-machine runs, every check white box included | "
                   "{vllm.thorough_v1.wall:.1f} s ({vllm.thorough_v1.suite:.1f} s) |"),
    Quote(ENGINES, "| quick | p07 | FAIL: differential {vllm.quick_p07.failed:,} of {vllm.quick_p07.vectors:,} "
                   "vectors, … | {vllm.quick_p07.wall:.1f} s ({vllm.quick_p07.suite:.1f} s) |"),
    Quote(ENGINES, "| default | p07 | FAIL: the same one cause and counterexample | {vllm.default_p07.wall:.1f} s "
                   "({vllm.default_p07.suite:.1f} s) |"),
    Quote(ENGINES, "down to a cause, {vllm.causes_low:,}-{vllm.causes_high:,} s of the above"),
    Quote(ENGINES, "The first run on a machine takes {vllm.first_run_more:,} s more"),
    Quote(ENGINES, "`bash tests/external/run.sh vllm` ({vllm_1205.run_sh.tests:,} tests, quick and default runs in "
                   "process among them) takes {vllm_1205.run_sh.wall:,} s once the virtualenv exists (pytest's count: "
                   "{vllm_1205.run_sh.pytest:,} s)."),
    Quote(ENGINES, "({vllm.config_ms:,} ms each, after {vllm.config_first:.1f} s for the first)"),
    Quote(ENGINES, "differs; each took {vllm_1205.venv_low:,}-{vllm_1205.venv_high:,} s to make from the registry)"),
    Quote(ENGINES, "policy ({vllm_1205.release_low:,}-{vllm_1205.release_high:,} s per release)."),
    Quote(ENGINES, "| quick | PASS: every check, white box included | {vllm_1205.chunk_quick.wall:.1f} s "
                   "({vllm_1205.chunk_quick.suite:.1f} s) |"),
    Quote(ENGINES, "| default | PASS: every check, {vllm_1205.chunk_default.runs:,} runs | "
                   "{vllm_1205.chunk_default.wall:.1f} s ({vllm_1205.chunk_default.suite:.1f} s) |"),
    Quote(ENGINES, "whose hint is `--policy vllm-v1:reserve_full_isl=false`; counterexample 2 requests, 3 steps | "
                   "{vllm_1205.chunk_under_v1.wall:.1f} s "
                   "({vllm_1205.chunk_under_v1.suite:.1f} s) |"),
    Quote(ENGINES, "which equals this policy, whose hint names it); counterexample 2 requests, 3 steps | "
                   "{vllm_1205.chunk_under_p07.wall:.1f} s ({vllm_1205.chunk_under_p07.suite:.1f} s) |"),

    # docs/conformance.md
    Quote(CONFORMANCE, "A submission that loops forever on every workload gets its FAIL in about "
                       "{hangs.fail_seconds:,} s;"),
    Quote(CONFORMANCE, "(1-minute load average {check_time_profiles.load_low:.1f} to "
                       "{check_time_profiles.load_high:.1f})"),
    *(Quote(CONFORMANCE, f"| {p} ({b}) | "
            + " | ".join(f"{{check_time_profiles.{p}.{t}.cpu:.1f}} s / {{check_time_profiles.{p}.{t}.wall:.1f}} s"
                         for t in ("impl", "reference", "spec")) + " |")
      for p, b in (("quick", "10 s"), ("default", "30 s"), ("thorough", "300 s"))),
    *(Quote(CONFORMANCE, _reach_bug(name)) for name in (
        "impl_seqs_cap_256", "impl_crc32_slots", "impl_recursive_steps", "impl_block_ids_uint16", "impl_preempt_bytes",
        "impl_instance_arenas", "impl_registry_by_id", "impl_ids_truncated_64", "impl_ids_ascii", "impl_numeric_fcfs",
        "impl_hash_slots", "impl_fnv_handles", "impl_batch_pool", "impl_compaction_1024")),
    *(Quote(CONFORMANCE, _reach_bug_default(name)) for name in ("impl_seqs_cap_1024", "impl_waiting_2048")),
    Quote(CONFORMANCE, "white-box checking reads every sequence after every call (about "
                       "{reach_cost.white_box_ms_per_step:.1f} ms a step)"),
    Quote(CONFORMANCE, "(`taskset -c 1`, load average {reach_cost.load_low:,} to {reach_cost.load_high:,}; CPU "
                       "seconds), the check of impl took {reach_cost.without.quick:.1f} s (quick) and "
                       "{reach_cost.without.default:.1f} s (default) without it and {reach_cost.with.quick:.1f} s and "
                       "{reach_cost.with.default:.1f} s with it; `python -m bench --check-time quick,default --targets "
                       "impl` gave {reach_cost.bench.quick_cpu:.1f} s and {reach_cost.bench.default_cpu:.1f} s of CPU "
                       "({reach_cost.bench.quick_wall:.1f} s and {reach_cost.bench.default_wall:.1f} s of wall time at "
                       "load {reach_cost.bench.load:,}) against {reach_cost.bench.quick_before:.1f} s and "
                       "{reach_cost.bench.default_before:.1f} s before. The largest cases live in default (crowds past "
                       "2^8 + 1 requests: {reach_cost.cases.crowds:.1f} s; numbers past 2^32; 1,025 schedulers at "
                       "once: {reach_cost.cases.instances:.1f} s) and thorough (a run of 10^4 steps: about "
                       "{reach_cost.cases.long_run:,} s; 2^11 + 1 preemptions of one sequence: about "
                       "{reach_cost.cases.preemptions:.1f} s),"),
    Quote(CONFORMANCE, "A mutant took {selfcheck.quick_median:.1f} s (median) under quick and "
                       "{selfcheck.default_median:.1f} s under default, wall time on the shared machine; the slowest "
                       "({selfcheck.quick_slowest:,} s and {selfcheck.default_slowest:,} s)"),
    Quote(CONFORMANCE, "both pass the quick profile, in about {wire.quick_wire_about:,} s instead of "
                       "{wire.quick_in_process_about:,} s in process"),
    Quote(CONFORMANCE, "(load average about {kill_times.load:,}; CPU seconds are the comparable number, wall seconds "
                       "are inflated about {kill_times.wall_inflation:,}x):"),
    Quote(CONFORMANCE, "| quick | {kill_times.quick.killed:,} of {kill_times.quick.mutants:,} | "
                       "{kill_times.quick.cpu_low:.1f}-{kill_times.quick.cpu_high:.1f} s; {kill_times.quick.hangs:,} s "
                       "for capacity_off_by_one and finish_keeps_blocks (their hangs on `scale-large-numbers`) | "
                       "{kill_times.quick.first_low:.3f}-{kill_times.quick.first_high:.1f} s |"),
    Quote(CONFORMANCE, "| default | {kill_times.default.killed:,} of {kill_times.default.mutants:,} | "
                       "{kill_times.default.cpu_low:.1f}-{kill_times.default.cpu_high:.1f} s; "
                       "{kill_times.default.hangs_low:,}-{kill_times.default.hangs_high:,} s for capacity_off_by_one "
                       "and finish_keeps_blocks | {kill_times.default.first_low:.3f}-"
                       "{kill_times.default.first_high:.1f} s |"),
    Quote(CONFORMANCE, "the first from a golden case (`budget16`) in {kill_times.budget16_first:.2f} s."),
    Quote(CONFORMANCE, "mutmut 3.8.1 on `impl/scheduler.py` ({mutmut.mutants:,} mutants, 2 workers, {mutmut.seconds:,} "
                       "s), killed by a test that runs the quick profile's golden cases and corpus with every "
                       "per-workload check and stops at the first finding: {mutmut.killed:,} killed, "
                       "{mutmut.survived:,} survived ({mutmut.kill_pct:.1f} %)."),

    # docs/wire-protocol.md
    Quote(WIRE, "shared with other jobs (load {wire.load_low:.1f}-{wire.load_high:,}), `schedcheck check ... --profile "
                "quick`:"),
    Quote(WIRE, "| `impl`, in process | {wire.impl.white_low:.1f}-{wire.impl.white_high:.1f} s | "
                "{wire.impl.black:.1f} s |"),
    Quote(WIRE, "| `--wire \"python3 examples/wire/scheduler.py\"` | {wire.python.white_low:.1f}-"
                "{wire.python.white_high:.1f} s | {wire.python.black:.1f} s |"),
    Quote(WIRE, "(every integer a BigInt; load {wire.node.load_low:.1f}-{wire.node.load_high:,}) | "
                "{wire.node.white_low:.1f}-{wire.node.white_high:.1f} s | {wire.node.black:.1f} s |"),
    Quote(WIRE, "`outputs`, `close`): {wire.message_ms_low:.1f}-{wire.message_ms_high:.1f} ms each"),
    Quote(WIRE, "(a Python program that exits at step 2 of every run: about {wire.dying_minutes:,} minutes for the "
                "quick profile)"),
)

BLOCKS: tuple[Block, ...] = (
    Block(BENCH, "schedcheck bench (", SOURCES["bench"], render_bench),
    Block(BENCH, "target     profile   seconds", SOURCES["check_time"], render_check_times),
)

ALLOWED: tuple[Allowed, ...] = (
    Allowed("*", r"(?:< |at most |within its )10 s\b|at most 30 s|30 s default|5 min(?:utes)? thorough"
                 r"|at most 5 minutes|\((?:10|30|300) s\)",
            "the check-time budgets a correct submission must meet (bench/checktime.py BUDGETS)"),
    Allowed("*", r"\b1-minute load", "the name of the load average, not a figure"),
    Allowed("*", r"1\.5x target|target is at most 2x|target (?:is|of) (?:30|60)(?: submissions)? per minute"
                 r"|\b60 per minute on 2 cores",
            "targets (impl/floor's, the sandbox's cost, bench/throughput.py TARGET_PER_MINUTE)"),
    Allowed(README, r"\(200 s per claim\)", "prove's time box per claim (spec/bounded/cli.py), a setting"),
    Allowed(README, r"tests of 2 s or more each", "what the `long` mark means (pyproject.toml), a definition"),
    Allowed(BENCH, r"up to 2x from run to run",
            "how far a shared machine moves absolute times, a caution about every figure, not one measurement"),
    Allowed(CONFORMANCE, r"hangs \(10 s per run\)|take 10 s of CPU time \(or 60 s of wall time|every 50 ms",
            "the suite's time limits per run (conformance/limits.py)"),
    Allowed("*", r"10 s per reply|(?:within|Per reply\*\*:|wait for) 10 s",
            "the wire adapter's reply timeout (--wire-timeout, default 10 s)"),
    Allowed(GRADING, r"\(60 s, 100, 300 s with", "the submission's budget under the default rubric, a limit"),
    Allowed("docs/sandbox.md", r"every 0\.2 s|every 1/64 s|\(1/64 s, when"
                               r"|a sleep of 0\.6 s times out|one of\s+0\.3 s in"
                               r"|(?:nothing|progress|message) for 0\.5 s"
                               r"|for 0\.5 s(?: of a workload|, or this)"
                               r"|more than 2 s of CPU|\+ 2 s\b|use 2 s per workload|\(\+1 s for"
                               r"|\(60 s(?: of CPU| and 300 s)|300 s of wall time"
                               r"|only 0\.5 s of CPU past|at most that 0\.5 s",
            "the sandbox's limits, sampling period and messages quoting them (conformance/sandbox/types.py Limits, "
            "watch.py POLL and IMPORT_SLACK), and the sleeps tests/grading/test_idle_limit.py sets"),
    Allowed("docs/wire-protocol.md", r"by default 2 s of CPU time per run|and 600 s for all of a submission",
            "the default rubric's limits (conformance/grading/rubric.toml [limits]), settings"),
)

# a number followed by a unit of time, "N tests", "N per minute", "N times as", or a ratio "1.11x"
TIME_LIKE = re.compile(r"(?<![\w.^])\d(?:[\d,]*\d)?(?:\.\d+)?"
                       r"(?:(?:\s|-)?(?:ms|ns|µs|us|s|min|minutes?|seconds?|hours?)\b|x\b|\s+(?:[a-z-]+\s+)?tests\b|\s+(?:submissions\s+)?per\s+minute\b"
                       r"|\s+times\s+(?:as|the)\b)")


def docs(root: Path = ROOT) -> list[str]:
    """The pages whose figures are checked; docs/proofs.md is generated whole by `prove` and left to it."""
    return ["README.md", *sorted(f"docs/{p.name}" for p in (root / "docs").glob("*.md") if p.name != "proofs.md")]


# --- checking and rewriting -----------------------------------------------------------------------------------

def _context(text: str, start: int, end: int) -> str:
    """The words around a span, about forty characters each side, on one line."""
    left = max(0, text.rfind(" ", 0, max(0, start - 40)) + 1) if start > 40 else 0
    right = text.find(" ", end + 40)
    return " ".join(text[left:right if right >= 0 else len(text)].split())


def _find(quote: Quote, text: str) -> tuple[list[re.Match[str]], Problem | None]:
    found = list(quote.pattern.finditer(text))
    if len(found) == 1:
        return found, None
    if not found:
        why = (f"{quote.doc} no longer has the text “{quote.template}”: restore its words, or change its Quote in "
               f"bench/figures.py to the new ones")
    else:
        why = (f"{quote.doc} has the text “{quote.template}” {len(found)} times: give its Quote in bench/figures.py "
               f"words that occur once")
    return found, Problem(quote.doc, quote.template, why)


def _stale(f: Figure, quoted: str, says: str, snippet: str, store: Store) -> Problem:
    where = " and ".join(s.path for s in f.sources)
    when = "; ".join(store.when(s) for s in f.sources)
    verb = "says" if len(f.sources) == 1 else "say"
    return Problem(f.doc, snippet, f"{f.doc} quotes {quoted} in “{snippet}”; {where} {verb} {says} ({f.key}, {when}): "
                                   f"run `{REWRITE}` to rewrite the docs")


def _unreadable(f: Figure, error: Exception) -> Problem:
    where = ", ".join(f"{s.path} (`{s.command}`)" for s in f.sources)
    return Problem(f.doc, f.quote, f"{f.doc} quotes {f.key} from {where}, which cannot be read ({error}): measure it "
                                   f"again with the command given")


def _values(quote: Quote, store: Store) -> tuple[list[str | None], list[Problem]]:
    out: list[str | None] = []
    problems = []
    for f in quote.figures:
        try:
            out.append(written(store.value(f.key), f.fmt))
        except (Missing, OSError, ValueError) as e:
            out.append(None)
            problems.append(_unreadable(f, e))
    return out, problems


def _block(b: Block, text: str, store: Store) -> tuple[re.Match[str] | None, str | None, Problem | None]:
    """Where a block is in its doc and what its source renders; or why one of the two cannot be had."""
    found = b.pattern.search(text)
    if found is None:
        return None, None, Problem(b.doc, b.first_line, f"{b.doc} has no fenced block that starts “{b.first_line}”: "
                                                         f"restore the block's fences, then run `{REWRITE}`")
    try:
        return found, b.render(store.data(b.source)), None
    except (OSError, KeyError, ValueError) as e:
        return found, None, Problem(b.doc, b.first_line, f"{b.source.path} cannot be read ({e!r}): measure it again "
                                                         f"with `{b.source.command}`")


def check(root: Path = ROOT) -> list[Problem]:
    """Every registered figure whose doc and stored measurement disagree, or that cannot be found or read."""
    store, problems = Store(root), []
    texts = {d: (root / d).read_text() for d in docs(root)}
    for q in QUOTES:
        found, missing = _find(q, texts[q.doc])
        if missing:
            problems.append(missing)
            continue
        values, unreadable = _values(q, store)
        problems += unreadable
        m = found[0]
        for i, (f, says) in enumerate(zip(q.figures, values, strict=True)):
            if says is not None and not _same(m.group(f"f{i}"), says):
                snippet = _context(texts[q.doc], m.start(f"f{i}"), m.end(f"f{i}"))
                problems.append(_stale(f, m.group(f"f{i}"), says, snippet, store))
    for b in BLOCKS:
        where, rendered, problem = _block(b, texts[b.doc], store)
        if problem:
            problems.append(problem)
        elif where and where.group("body") != rendered:
            problems.append(Problem(b.doc, b.first_line, (
                f"{b.doc}'s block “{b.first_line}…” is not what {b.source.path} renders "
                f"({store.when(b.source)}): run `{REWRITE}` to rewrite the docs")))
    return problems


def rewrite(root: Path = ROOT) -> tuple[list[Change], list[Problem]]:
    """Write every figure from its stored measurement into its doc; what changed, and what could not be done."""
    store, changes, problems = Store(root), [], []
    for doc in docs(root):
        path = root / doc
        text = original = path.read_text()
        for q in (q for q in QUOTES if q.doc == doc):
            found, missing = _find(q, text)
            values, unreadable = _values(q, store)
            if missing or unreadable:
                problems += ([missing] if missing else []) + unreadable
                continue
            m = found[0]
            for i in reversed(range(len(q.figures))):  # from the end, so that the earlier spans stay where they are
                new = values[i]
                if new is not None and not _same(m.group(f"f{i}"), new):
                    changes.append(Change(doc, m.group(f"f{i}"), new, q.figures[i].key))
                    text = text[:m.start(f"f{i}")] + new + text[m.end(f"f{i}"):]
        for b in (b for b in BLOCKS if b.doc == doc):
            where, rendered, problem = _block(b, text, store)
            if problem:
                problems.append(problem)
            elif where and rendered is not None and where.group("body") != rendered:
                changes.append(Change(doc, b.first_line + "…", "(the block as rendered)", b.source.path))
                text = text[:where.start("body")] + rendered + text[where.end("body"):]
        if text != original:
            path.write_text(text)
    return changes, problems


def _spans(text: str, doc: str) -> Iterator[tuple[int, int]]:
    """Where a doc's registered figures and allowed constants are."""
    for q in (q for q in QUOTES if q.doc == doc):
        for m in q.pattern.finditer(text):
            yield from (m.span(f"f{i}") for i in range(len(q.figures)))
    for b in (b for b in BLOCKS if b.doc == doc):
        for m in b.pattern.finditer(text):
            yield m.span("body")
    for a in (a for a in ALLOWED if a.doc in ("*", doc)):
        yield from (m.span() for m in re.finditer(a.pattern.replace(" ", r"\s+"), text))  # a line may break anywhere


def unregistered(root: Path = ROOT) -> list[Problem]:
    """Every time-like figure in the docs that is neither a registered figure nor an allowed constant."""
    problems = []
    for doc in docs(root):
        text = (root / doc).read_text()
        spans = list(_spans(text, doc))
        for m in TIME_LIKE.finditer(text):
            if not any(start <= m.start() < end for start, end in spans):
                line = text.count("\n", 0, m.start()) + 1
                snippet = _context(text, m.start(), m.end())
                problems.append(Problem(doc, snippet, (
                    f"{doc}:{line} quotes {' '.join(m.group().split())!r} in “{snippet}”, which no stored "
                    f"measurement backs: store it where its command writes (bench/measured/) and register it in "
                    f"bench/figures.py QUOTES, or, if it measures nothing (a limit, a budget, a target), add it "
                    f"to ALLOWED with the reason")))
    return problems


for _q in QUOTES:  # a bad key or format fails at import, not in the middle of a rewrite
    _ = _q.pattern
