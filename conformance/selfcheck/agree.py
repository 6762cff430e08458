"""`python -m conformance.selfcheck.agree OUT`: do `check` and `grade` give every submission here one verdict?

Every scheduler this package holds is written out as a submission: impl, the correct styles, the catalog
mutants, the buggy example and the wire examples. `--add FOLDER` adds the modules of a folder
(tests/selfcheck/test_agree.py adds the styles and bugs of tests/conformance written from the docs alone,
and the edits grading once missed). Each is checked with
`schedcheck check FILE --profile P --json` and the whole class graded with one `schedcheck grade`, both
through the command line, as users run them. Two commands agree on a submission when

- the verdict is PASS exactly when the grade is full marks, and
- the checks that fail are the same: the names of `check`'s failing rows, against the checks with a finding
  in some item of the grade (`failed_checks` of grade.json's items).

A disagreement is printed with both sides; the exit code is 1 when there is one. Results go to
OUT/agree.json. This runs for minutes per submission under `default`: it is a measurement, not a unit test
(tests/selfcheck/test_agree.py runs it on a few submissions, and all of them under `-m slow`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conformance.mutants import build as mutants

ROOT = Path(__file__).resolve().parents[2]
WIRE_PROGRAMS = {"wire_python": ("python3", "scheduler.py"), "wire_node": ("node", "scheduler.js")}


@dataclass(frozen=True, slots=True)
class Submission:
    """One scheduler to check and grade: a module's text, or a wire program (`command` run in its folder)."""

    name: str
    kind: str  # impl, style, mutant, example, wire, or the folder an added one came from
    text: str
    command: tuple[str, str] | None = None  # (interpreter, program file) of a wire program


@dataclass(frozen=True, slots=True)
class Agreement:
    name: str
    kind: str
    verdict: str  # check's
    score: float | None  # grade's; None when not graded
    status: str  # grade's status for the entry
    check_failed: tuple[str, ...]
    grade_failed: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        full = self.score is not None and self.score >= 100.0
        return (self.verdict == "PASS") == full and self.check_failed == self.grade_failed


def submissions() -> Iterator[Submission]:
    """Every scheduler this package can build, each once, in a fixed order (the tests add theirs: `added`)."""
    yield Submission("impl", "impl", (ROOT / "impl" / "scheduler.py").read_text())
    for path in sorted((ROOT / "conformance" / "selfcheck" / "styles").glob("*.py")):
        if path.name != "__init__.py":
            yield Submission(f"style_{path.stem}", "style", path.read_text())
    yield Submission("mutant_reference", "mutant", mutants.source())  # every mutant's base, with no bug
    for name in mutants.names():
        yield Submission(f"mutant_{name}", "mutant", mutants.source(name))  # self-contained, as a student's file
    yield Submission("example_p07_buggy", "example", (ROOT / "examples" / "p07_buggy" / "p07_scheduler.py").read_text())
    for name, (interpreter, program) in WIRE_PROGRAMS.items():
        if shutil.which(interpreter):
            yield Submission(name, "wire", (ROOT / "examples" / "wire" / program).read_text(), (interpreter, program))


def added(folder: Path) -> Iterator[Submission]:
    """The modules of `folder` as submissions of kind `folder.name` (`--add`: the tests' outside bugs, say)."""
    for path in sorted(folder.glob("*.py")):
        if path.name != "__init__.py":
            yield Submission(f"{folder.name}_{path.stem}", folder.name, path.read_text())


def write_class(subs: list[Submission], folder: Path) -> dict[str, Path]:
    """The class folder `grade` reads; {name: what `check` is given (a file, or a wire program's folder)}."""
    where = {}
    for s in subs:
        if s.command is None:
            path = folder / f"{s.name}.py"
            path.write_text(s.text)
        else:
            path = folder / s.name
            path.mkdir()
            (path / s.command[1]).write_text(s.text)
            (path / "wire.toml").write_text(f'command = "{s.command[0]} {s.command[1]}"\n')
        where[s.name] = path
    return where


def check(s: Submission, path: Path, profile: str, out: Path) -> dict[str, Any]:
    """`schedcheck check` on one submission; its JSON report."""
    report = out / f"{s.name}.json"
    target = [str(path)] if s.command is None else ["--wire", f"{s.command[0]} {path / s.command[1]}"]
    subprocess.run([sys.executable, "-m", "conformance", "check", *target, "--profile", profile, "--quiet",
                    "--json", str(report)], cwd=ROOT, capture_output=True, timeout=3600, check=False)
    if not report.exists():
        return {"verdict": "ERROR", "checks": {}}
    return dict(json.loads(report.read_text()))


def grade_checks(grade: dict[str, Any]) -> tuple[str, ...]:
    """The checks with a finding in some item of the grade (grade.json's items' `failed_checks`)."""
    return tuple(sorted({c for item in grade.get("items", []) for c in item.get("failed_checks", ())}))


def compare(subs: list[Submission], out: Path, profile: str, jobs: int) -> list[Agreement]:
    if out.exists():
        shutil.rmtree(out)
    (out / "class").mkdir(parents=True)
    (out / "check").mkdir()
    where = write_class(subs, out / "class")
    subprocess.run([sys.executable, "-m", "conformance", "grade", str(out / "class"), "--out", str(out / "grade"),
                    "--jobs", str(jobs)], cwd=ROOT, capture_output=True, timeout=36000, check=False)
    with ThreadPoolExecutor(jobs) as pool:
        reports = list(pool.map(lambda s: check(s, where[s.name], profile, out / "check"), subs))
    results = []
    for s, report in zip(subs, reports, strict=True):
        graded = out / "grade" / s.name / "grade.json"
        grade = json.loads(graded.read_text()) if graded.exists() else {}
        checks = report.get("checks", {})
        failed = tuple(sorted(c for c, r in checks.items() if isinstance(r, dict) and r.get("status") == "fail"))
        score = grade.get("score")
        results.append(Agreement(s.name, s.kind, str(report.get("verdict")),
                                 float(score) if isinstance(score, int | float) else None,
                                 str(grade.get("status", "missing")), failed, grade_checks(grade)))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.selfcheck.agree", description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="a folder to write the class, the reports and agree.json into")
    parser.add_argument("--profile", default="default", help="check's profile (default: default)")
    parser.add_argument("--only", help="comma-separated submission names or kinds (impl, style, mutant, ...)")
    parser.add_argument("--add", type=Path, action="append", default=[], metavar="FOLDER",
                        help="also every module of FOLDER, as submissions of kind FOLDER's name (repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="checks run at once, and grade's --jobs")
    args = parser.parse_args(argv)
    subs = list(submissions()) + [s for folder in args.add for s in added(folder)]
    if args.only:
        wanted = set(args.only.split(","))
        subs = [s for s in subs if s.name in wanted or s.kind in wanted]
        if not subs:
            parser.error(f"--only {args.only!r} names no submission; names look like impl, style_event_log")
    results = compare(subs, args.out, args.profile, args.jobs)
    (args.out / "agree.json").write_text(json.dumps([asdict(r) | {"agrees": r.agrees} for r in results], indent=1))
    for r in results:
        mark = "agree" if r.agrees else "DISAGREE"
        print(f"{mark:9} {r.name:44} check {r.verdict:7} {','.join(r.check_failed) or '-':40} "
              f"grade {r.score} {','.join(r.grade_failed) or '-'}")
    bad = sum(not r.agrees for r in results)
    print(f"{len(results) - bad} of {len(results)} submissions agree (check --profile {args.profile}, grade)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
