"""The hostile corpus graded as one class, twice, beside a CPU burner: verdicts, fairness, determinism.

Every case of tests/grading/hostile/ (appended to the reference scheduler) and every input that must
be refused up front (a FIFO, symlinks, a name that collides with an output file, a name that is not
UTF-8, corrupt and unsupported zips, a 1 GiB sparse file) sits in one class with honest
classmates. Expected: each hostile case gets its verdict; the honest ones get the grade they get
alone; the command exits 0 and summary.csv has a row for every entry; and the two runs give
byte-identical files (execution_time aside). Run with `pytest -m slow`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.grading.calibrate import flatten

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "grading" / "hostile"
CORRECT = ROOT / "impl" / "scheduler.py"
FULL = {"results_json", "monkeypatch_builtins", "output_flood", "read_by_handle", "read_host_files",
        "capabilities", "shm_fill", "deep_dirs", "shared_drop", "shared_pickup", "probe_frames", "probe_peek",
        "slow_correct"}  # attacks that gain nothing: graded as the correct scheduler they wrap (the ones that fork
#                           or start a thread are not: the child may start none, so they do not load or crash)
HONEST = ("impl", "preempt_to_tail", "phase2_continue")
REFUSED = {"fifo.py": "FIFO", "link.py": "symbolic link", "summary.csv.py": "a file grading writes",
           "caf\\xe9.py": "not valid UTF-8", "corrupt.zip": "cannot be read", "deflate64.zip": "cannot be read",
           "sparse.py": "more than the", "linked": "symbolic link"}


def honest(subs: Path) -> None:
    (subs / "impl.py").write_bytes((ROOT / "impl" / "scheduler.py").read_bytes())
    for bug in HONEST[1:]:
        (subs / f"{bug}.py").write_text(flatten(bug))


def refused_inputs(subs: Path) -> None:
    os.mkfifo(subs / "fifo.py")
    (subs / "link.py").symlink_to(ROOT / "impl" / "scheduler.py")
    (subs / "linked").mkdir()
    (subs / "linked" / "p07_scheduler.py").symlink_to(subs / "impl.py")
    (subs / "summary.csv.py").write_text("x = 1\n")
    with open(os.path.join(os.fsencode(subs), b"caf\xe9.py"), "wb") as f:  # a correct scheduler: the name alone
        f.write((ROOT / "impl" / "scheduler.py").read_bytes())
    (subs / "corrupt.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    with zipfile.ZipFile(subs / "deflate64.zip", "w") as z:
        z.writestr("p07_scheduler.py", "x = 1\n")
    data = bytearray((subs / "deflate64.zip").read_bytes())
    for at in (8, data.rindex(b"PK\x01\x02") + 10):
        data[at:at + 2] = (9).to_bytes(2, "little")
    (subs / "deflate64.zip").write_bytes(bytes(data))
    with open(subs / "sparse.py", "wb") as f:
        f.truncate(1 << 30)


def the_class(tmp: Path) -> Path:
    subs = tmp / "subs"
    subs.mkdir()
    honest(subs)
    for case in sorted(HOSTILE.glob("*.py")):
        folder = subs / f"hostile_{case.stem}"
        folder.mkdir()
        (folder / "p07_scheduler.py").write_text(CORRECT.read_text() + "\n\n" + case.read_text())
    (subs / "hostile_syntax_error.py").write_bytes((HOSTILE / "syntax_error.txt").read_bytes())
    refused_inputs(subs)
    return subs


def rubric(tmp: Path) -> Path:
    text = (ROOT / "conformance" / "grading" / "rubric.toml").read_text()
    text = text.replace("max_timeouts = 20", "max_timeouts = 5")  # hanging cases stop sooner; limits as shipped
    path = tmp / "rubric.toml"
    path.write_text(text)
    return path


def files(out: Path) -> dict[str, bytes]:
    """Every file under out, results.json without its execution_time."""
    found = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if path.name == "results.json":
                obj = json.loads(data)
                obj.pop("execution_time", None)
                data = json.dumps(obj, sort_keys=True).encode()
            found[str(path.relative_to(out))] = data
    return found


def summary(out: Path) -> dict[str, dict[str, str]]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "summary.csv").read_text()))}


@pytest.mark.slow
def test_the_hostile_class_twice_beside_a_cpu_burner(tmp_path: Path) -> None:
    subs, rub = the_class(tmp_path), rubric(tmp_path)
    alone = tmp_path / "alone"
    alone.mkdir()
    honest(alone)
    assert main(["grade", str(alone), "--out", str(tmp_path / "out-alone"), "--rubric", str(rub)]) == 0
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for run in ("out1", "out2"):
            code = main(["grade", str(subs), "--out", str(tmp_path / run), "--rubric", str(rub), "--jobs", "2"])
            unusable = "not graded" in (tmp_path / run / "summary.csv").read_text()
            assert code == (3 if unusable else 0), code  # 3: some entries refused, none lost, no grader error
    finally:
        burner.kill()
        burner.wait()
    first, second = files(tmp_path / "out1"), files(tmp_path / "out2")
    assert sorted(first) == sorted(second)
    assert [k for k in first if first[k] != second[k]] == []
    rows, by_alone = summary(tmp_path / "out1"), summary(tmp_path / "out-alone")
    entries = {os.fsdecode(n).removesuffix(".py") for n in os.listdir(os.fsencode(subs))}
    assert len(rows) == len(entries)
    for name in HONEST:
        assert rows[name]["score"] == by_alone[name]["score"] and rows[name]["status"] == "graded"
    for case in HOSTILE.glob("*.py"):
        row = rows[f"hostile_{case.stem}"]
        assert row["status"] == "graded", row
        want_full = case.stem in FULL
        assert (float(row["score"]) == 100.0) == want_full, (case.stem, row["score"])
    refused = {r["submission"]: r for r in rows.values() if r["status"] == "not graded"}
    for name, words in REFUSED.items():
        match = [r for n, r in refused.items() if n.startswith(name.removesuffix(".py").removesuffix(".zip"))]
        assert match and words in match[0]["cause"], (name, match)
