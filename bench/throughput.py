"""Grading throughput: ``python -m bench --grade-throughput [--class course|catalog] [--copies N] [--jobs J]``.

A class is graded with the default rubric by `schedcheck grade --jobs J` in a child process, from a
fresh output folder, and timed: submissions per minute of wall time (start-up and the class summary
included), with the CPU seconds the whole machine spent per submission. Two classes, each `copies`
times over:

- ``course`` (the target): what a course hands in, correct and buggy: impl/, the seven correct style
  files written independently of the spec's code (conformance/selfcheck/styles/), and the sixteen
  bugs written from outside into those styles and impl (tests/conformance/unseen/);
- ``catalog``: impl/ and every catalog mutant. A catalog mutant runs on the pure spec (immutable
  tuples, conformance/mutants/build.py), which costs its child process about twice what a list-based
  submission costs, so this class is slower than any course's.

The grade runs under bench/reaper.py, which adopts the sandboxes' processes (killed with their parents,
they would be reaped by init and counted nowhere), so the CPU per submission is split between the
grader's own processes and the sandboxes' process trees; the whole machine's CPU is given beside it
(on a shared machine it includes other jobs).

The baseline, measured in the same run, is the same submissions checked in process with no sandbox:
each one's corpus and held-out cases run on it through the suite's own driver and judged by the same
checkers, one process per core, prepared as a grade prepares its workers (conformance.grading.warm).
The ratio of the two is the sandbox's overhead. The target is 60 submissions/min on 2 cores for the
course class.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance.grading.rubric import load_rubric
from conformance.grading.warm import warm

ROOT = Path(__file__).resolve().parents[1]
TARGET_PER_MINUTE = 60.0
IN_PROCESS_MEMORY = 2**33  # bytes of address space each in-process check may take (8 GiB: two fit in 24 GiB)
CLASSES = ("course", "catalog")


def _machine_cpu() -> float:
    """CPU seconds the whole machine has spent (user, nice, system), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:4]
    return sum(int(x) for x in fields) / os.sysconf("SC_CLK_TCK")


def class_files() -> dict[str, dict[str, str]]:
    """Each class as file name -> source."""
    from conformance.grading.calibrate import write_class
    from tests.conformance.unseen.planted import UNSEEN, source

    course = {"impl.py": (ROOT / "impl" / "scheduler.py").read_text()}
    course |= {f"style_{p.stem}.py": p.read_text() for p in sorted((ROOT / "conformance" / "selfcheck" / "styles")
                                                                   .glob("*.py")) if not p.stem.startswith("_")}
    course |= {f"bug_{name}.py": source(name) for name in UNSEEN}
    with tempfile.TemporaryDirectory() as tmp:
        catalog = {p.name: p.read_text() for p in write_class(tmp)}
    return {"course": course, "catalog": catalog}


def write_submissions(dest: Path, copies: int, which: str = "course") -> list[Path]:
    files = class_files()[which]
    written: list[Path] = []
    for k in range(copies):
        for name, text in files.items():
            target = dest / f"{Path(name).stem}_{k}.py"
            target.write_text(text)
            written.append(target)
    return written


def in_process(path: str) -> float:
    """Check one submission on every grading case, in process, with the same checkers; its CPU seconds."""
    from conformance.adapters import load_target
    from conformance.drivers import run_workload
    from conformance.grading.observe import judge_case
    from conformance.grading.warm import settle
    from spec.trace import Workload

    settle()  # as each grading worker does before a submission (conformance.grading.warm)
    start = time.process_time()
    factory = load_target(path)
    for cases, runs in submission_parts(Path(path)):
        observed = [run_workload(w, factory) if isinstance(w, Workload) else
                    run_workload(w.workload, factory, mutate_results="mutate" in w.probe.split("+"),
                                 white_box=w.group is None and not {"mutate", "beside"} & {*w.probe.split("+")})
                    for w in runs]
        for i, c in enumerate(cases):
            judge_case(c, observed[i], None if c.twin is None else observed[c.twin],
                       None if c.mutated is None else observed[c.mutated])
    return time.process_time() - start


def bounded_in_process(path: str) -> float | None:
    """in_process in a process of its own (forked from the warmed one, gone after it) under IN_PROCESS_MEMORY of
    address space; None when the submission's runs needed more. In process nothing bounds what a submission's
    traces hold: one that runs hundreds of workloads to their step cap held 3.4 GB, and one process checking
    half a class in turn grew until the kernel killed it, and the benchmark with it."""
    resource.setrlimit(resource.RLIMIT_AS, (IN_PROCESS_MEMORY, IN_PROCESS_MEMORY))
    try:
        return in_process(path)
    except MemoryError:
        return None


def submission_parts(path: Path) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
    """What grading one submission runs: the public cases and runs, then its own held-out ones."""
    from conformance.grading.heldout import held_out_seed, submission_bytes, submission_key
    from conformance.grading.judge import grading_cases, held_out_part

    rubric = load_rubric()
    parts = [grading_cases(rubric)]
    if rubric.held_out:
        key = submission_key(held_out_seed()[0], submission_bytes(path))
        parts.append(held_out_part(key, rubric.held_out, rubric.policy))
    return parts


def measure(copies: int = 2, jobs: int = 2, which: str = "course") -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="schedcheck-throughput-") as tmp:
        subs = Path(tmp) / "subs"
        subs.mkdir()
        paths = write_submissions(subs, copies, which)
        env = {**os.environ, "SCHEDCHECK_HELD_OUT_SEED": os.environ.get("SCHEDCHECK_HELD_OUT_SEED", "1")}
        counted = Path(tmp) / "cpu.json"  # the grader's CPU and its sandboxes' (bench/reaper.py)
        machine0, start = _machine_cpu(), time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "bench.reaper", str(counted), sys.executable, "-m", "conformance",
                               "grade", str(subs), "--out", f"{tmp}/out", "--jobs", str(jobs)], cwd=ROOT, env=env,
                              capture_output=True, text=True, check=False)
        wall, machine = time.perf_counter() - start, _machine_cpu() - machine0
        if done.returncode != 0:
            raise RuntimeError(f"schedcheck grade exited {done.returncode}: {done.stderr[-2000:]}")
        cpu = json.loads(counted.read_text())
        os.environ.setdefault("SCHEDCHECK_HELD_OUT_SEED", env["SCHEDCHECK_HELD_OUT_SEED"])
        base_start = time.perf_counter()
        warm(load_rubric())  # as schedcheck grade does before its workers fork
        with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=1) as pool:
            base = pool.map(bounded_in_process, [str(p) for p in paths], chunksize=1)
        base_wall = time.perf_counter() - base_start
        parts = submission_parts(paths[0])  # what one submission's grade runs (docs/grading.md quotes it)
    n = len(paths)
    base_cpu = [c for c in base if c is not None]
    out_of_memory = sorted(p.stem for p, c in zip(paths, base, strict=True) if c is None)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"format": "schedcheck/bench-throughput", "version": 3, "class": which, "submissions": n, "jobs": jobs,
            "cpus": os.cpu_count(), "grade_wall_seconds": round(wall, 1), "per_minute": round(60 * n / wall, 1),
            "machine_cpu_seconds_per_submission": round(machine / n, 2),
            "grader_cpu_seconds_per_submission": round(cpu["command"] / n, 2),
            "sandbox_cpu_seconds_per_submission": round(cpu["adopted"] / n, 2),
            "in_process_wall_seconds": round(base_wall, 1), "in_process_per_minute": round(60 * n / base_wall, 1),
            "in_process_cpu_seconds_per_submission": round(sum(base_cpu) / max(len(base_cpu), 1), 2),
            "in_process_out_of_memory": out_of_memory,
            "overhead": round(wall / base_wall, 2), "load_average_1min": None if load is None else round(load, 2),
            "target_per_minute": TARGET_PER_MINUTE, "cases_per_submission": sum(len(c) for c, _ in parts),
            "runs_per_submission": sum(len(r) for _, r in parts)}


def render(r: dict[str, Any]) -> str:
    verdict = "meets" if r["per_minute"] >= r["target_per_minute"] else "BELOW"
    what = ("impl, the style files and the bugs written from outside" if r["class"] == "course"
            else "impl and the catalog mutants")
    return (f"{r['class']} class: graded {r['submissions']} submissions ({what}) with --jobs {r['jobs']} on "
            f"{r['cpus']} CPUs: {r['grade_wall_seconds']} s wall, {r['per_minute']} submissions/min ({verdict} the "
            f"target of {r['target_per_minute']:g}); the machine spent {r['machine_cpu_seconds_per_submission']} "
            f"CPU s per submission (the grader's own processes {r['grader_cpu_seconds_per_submission']}, the "
            f"sandboxes' process trees {r.get('sandbox_cpu_seconds_per_submission', '?')})\n"
            f"in process, no sandbox, same cases and checkers: {r['in_process_wall_seconds']} s wall, "
            f"{r['in_process_per_minute']}/min, {r['in_process_cpu_seconds_per_submission']} CPU s each"
            + (f" (out of its {IN_PROCESS_MEMORY >> 30} GiB, not counted: {', '.join(oom)})" if (oom := r.get(
                "in_process_out_of_memory")) else "") + "\n"
            f"sandboxed / in process (wall): {r['overhead']}x; load average {r['load_average_1min']}")
