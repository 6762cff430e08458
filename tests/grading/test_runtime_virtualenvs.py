"""The child's root holds the interpreter's real runtime, whatever the grader was started from.

The grader runs from a virtualenv where users keep one (~/.venv, a checkout's .venv made with --copies,
/opt/...), from the base interpreter and from the distribution's; each time a submission walks the whole
filesystem it can see from inside the sandbox, at every namespace level the machine has, and then runs a
workload. No path of the virtualenv may be there, no site-packages may hold anything, and the child must
run the base installation's interpreter. At the process-group level (no fresh root) the child must still
start the base interpreter, not the virtualenv's, without site-packages.

The virtualenvs live outside /tmp: the child's /tmp is a fresh tmpfs, which would hide one there by
accident and prove nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.sandbox.isolation import LEVELS, works

PROJECT = Path(__file__).resolve().parents[2]
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"
NAMESPACES = [level for level in LEVELS if level != "process-group" and works(level)]
PLACES = ["home", "checkout-copies", "opt", "base", "distro"]

WALKER = r'''


def _walk_the_root(venv, sites, builds_root):
    """Every path of the virtualenv the child can see, every site folder that holds something, the runtime."""
    import json, os, sys

    def state(path):
        try:
            os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return "absent"
        except OSError:
            return "unreachable"
        try:
            return "full" if os.listdir(path) else "empty"
        except NotADirectoryError:
            return "file"
        except OSError:
            return "unreadable"

    seen, full, entries = [], [], 0
    for root, dirs, files in os.walk("/") if builds_root else ():
        if root == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
        entries += len(dirs) + len(files)
        seen += [p for p in (os.path.join(root, n) for n in dirs + files)
                 if any(p == v or p.startswith(v + "/") for v in venv)]
        if os.path.basename(root) in ("site-packages", "dist-packages") and (dirs or files):
            full.append(root)
    print(json.dumps({"entries": entries, "seen": seen[:50], "full": full[:50],
                      "probes": {p: state(p) for p in venv + sites}, "executable": sys.executable,
                      "prefix": sys.prefix, "base_prefix": sys.base_prefix, "version": sys.version, "path": sys.path,
                      "flags": [sys.flags.no_site, sys.flags.ignore_environment, sys.flags.safe_path]}), flush=True)
'''  # appended to the reference scheduler with a call, so the module still runs a workload after the walk

DRIVER = r'''
import json, os, site, sys, sysconfig
from pathlib import Path

import conformance
from conformance.sandbox.run import run_in_sandbox
from conformance.sandbox.types import Limits
from spec.model import Config
from spec.trace import Request, make_workload

level, folder, walker = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]).read_text()
venv = []
if sys.prefix != sys.base_prefix:
    venv = sorted({sys.prefix, os.path.realpath(sys.prefix)})
    venv += [os.path.join(v, name) for v in venv for name in ("pyvenv.cfg", "bin/python", "bin/schedcheck", "STAMP")]
sites = [*site.getsitepackages(), *site.getsitepackages([sys.base_prefix, sys.base_exec_prefix]),
         site.getusersitepackages(), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
source = Path(conformance.__file__).parents[1] / "impl" / "scheduler.py"
submission = folder / "p07_scheduler.py"
call = f"\n_walk_the_root({venv!r}, {sorted(set(sites))!r}, {level != 'process-group'!r})\n"
submission.write_text(source.read_text() + walker + call)
workload = make_workload(Config(3, 2, 8, 64), [Request("a1", 2, 3), Request("a2", 2, 3)], name="self-preemption")
limits = Limits(workload_seconds=5.0, startup_seconds=30.0, run_seconds=60.0, memory_bytes=256 << 20,
                isolation=level)
result = run_in_sandbox(submission, [workload], limits)
print(json.dumps({"level": result.isolation.level, "statuses": [w.status for w in result.workloads],
                  "causes": result.causes(), "load_error": result.load_error, "notes": list(result.notes),
                  "stdout": result.stdout, "stderr": result.stderr[-2000:], "venv": venv,
                  "base_prefix": os.path.realpath(sys.base_prefix), "version": sys.version}))
'''


BASE_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(Path.home())}


def outside_tmp() -> Path:
    """A fresh folder outside /tmp: in /var/tmp, else in ~/.cache."""
    for parent in (Path("/var/tmp"), Path.home() / ".cache"):
        real = parent.resolve()
        if real.is_dir() and os.access(real, os.W_OK) and Path("/tmp") not in (real, *real.parents):
            return Path(tempfile.mkdtemp(prefix="schedcheck-runtime-", dir=real))
    pytest.skip("no writable folder outside /tmp (/var/tmp or ~/.cache) to put a virtualenv in")


def make_venv(path: Path, copies: bool = False) -> Path:
    """A virtualenv as `pip install -e .` leaves one: the project importable through a .pth file in its
    site-packages, a console script and a stamp file at its top; its python."""
    options = ["--without-pip", *(["--copies"] if copies else [])]
    subprocess.run([sys.executable, "-m", "venv", *options, str(path)], check=True, capture_output=True, timeout=120)
    (path / "lib" / VERSION / "site-packages" / "schedcheck-editable.pth").write_text(f"{PROJECT}\n")
    (path / "bin" / "schedcheck").write_text("#!/bin/sh\nexit 0\n")
    (path / "STAMP").write_text("installed\n")
    return path / "bin" / "python"


def from_venv(python: Path, **env: str) -> tuple[str, dict[str, str]]:
    """A virtualenv's python and an environment with its bin/ first on PATH, as after `activate`."""
    return str(python), {**BASE_ENV, "PATH": f"{python.parent}:/usr/bin:/bin", **env}


def base_python() -> str:
    """The base installation's interpreter, found independently of the code under test."""
    named = Path(sys.base_exec_prefix) / "bin" / VERSION
    return os.path.realpath(named if named.is_file() else getattr(sys, "_base_executable", sys.executable))


def distro_python() -> str:
    """The distribution's python3, if it can run the project (3.11 or later)."""
    path = shutil.which("python3", path="/usr/bin:/bin")
    done = subprocess.run([path, "-c", "import sys; print(sys.version_info >= (3, 11))"], capture_output=True,
                          text=True, timeout=30) if path else None
    if path is None or done is None or done.stdout.strip() != "True":
        pytest.skip("no distribution python3 of 3.11 or later in /usr/bin")
    return path


def make_place(name: str, folders: list[Path]) -> tuple[str, dict[str, str]]:
    """The grader's interpreter at the place `name` and its environment; a folder it makes goes to `folders`."""
    if name in ("base", "distro"):
        return base_python() if name == "base" else distro_python(), {**BASE_ENV, "PYTHONPATH": str(PROJECT)}
    if name == "opt" and not os.access("/opt", os.W_OK):
        pytest.skip("/opt is not writable here (the virtualenv under /opt needs root)")
    folder = Path(tempfile.mkdtemp(prefix="schedcheck-runtime-", dir="/opt")) if name == "opt" else outside_tmp()
    folders.append(folder)
    folder.chmod(0o755)  # like a home or a checkout: a stranger may pass through
    if name == "home":
        home = folder / "home"
        user_site = home / ".local" / "lib" / VERSION / "site-packages"
        user_site.mkdir(parents=True)
        (user_site / "user.pth").write_text(f"{PROJECT}\n")
        return from_venv(make_venv(home / ".venv"), HOME=str(home))
    if name == "checkout-copies":
        (folder / "schedcheck").mkdir()
        (folder / "schedcheck" / "pyproject.toml").write_text("[project]\nname = 'schedcheck'\n")
        return from_venv(make_venv(folder / "schedcheck" / ".venv", copies=True))
    return from_venv(make_venv(folder / "venv"))


@pytest.fixture(scope="module")
def place() -> Iterator[Callable[[str], tuple[str, dict[str, str]]]]:
    """For a place's name: the grader's interpreter there and its environment, made once per module."""
    made: dict[str, tuple[str, dict[str, str]]] = {}
    folders: list[Path] = []

    def get(name: str) -> tuple[str, dict[str, str]]:
        if name not in made:
            made[name] = make_place(name, folders)
        return made[name]

    yield get
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def grade_from(python: str, env: dict[str, str], level: str, tmp_path: Path) -> dict[str, Any]:
    """Run the walking submission in the sandbox from the grader started as `python`; the driver's report."""
    (tmp_path / "walker.py").write_text(WALKER)
    (tmp_path / "driver.py").write_text(DRIVER)
    done = subprocess.run([python, str(tmp_path / "driver.py"), level, str(tmp_path), str(tmp_path / "walker.py")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["level"] == level and report["notes"] == [], report
    assert report["statuses"] == ["ok"] and report["load_error"] is None, (report["causes"], report["stderr"])
    return report


def seen_by(report: dict[str, Any]) -> dict[str, Any]:
    """What the child printed of its own filesystem and runtime."""
    lines = str(report["stdout"]).strip().splitlines()
    assert lines, report["stderr"]
    seen: dict[str, Any] = json.loads(lines[-1])
    return seen


@pytest.mark.long
@pytest.mark.parametrize("level", NAMESPACES)
@pytest.mark.parametrize("name", PLACES)
def test_the_root_holds_the_base_runtime_and_no_file_of_the_graders_virtualenv(
        name: str, level: str, place: Callable[[str], tuple[str, dict[str, str]]], tmp_path: Path) -> None:
    python, env = place(name)
    report = grade_from(python, env, level, tmp_path)
    seen = seen_by(report)
    assert isinstance(seen["entries"], int) and seen["entries"] > 100  # the walk saw /usr, not an empty root
    assert seen["seen"] == [], f"the virtualenv's files are in the child's root: {seen['seen']}"
    assert {p: s for p, s in seen["probes"].items() if s not in ("absent", "empty")} == {}
    version_sites = [p for p in seen["full"] if f"/{VERSION}/" in p or "/python3/" in p]  # another Python's
    # (a tool's bundled python3.12 under /usr) is a system file like the rest of /usr: this one never imports it
    assert version_sites == [], f"site folders this Python would import from are not covered: {version_sites}"
    assert seen["prefix"] == seen["base_prefix"] == report["base_prefix"], (seen["prefix"], report["base_prefix"])
    assert seen["version"] == report["version"]  # the base installation's runtime, not another one in /usr
    assert not [p for p in seen["path"] if p.endswith(("site-packages", "dist-packages"))]


@pytest.mark.parametrize("name", ["home", "checkout-copies", "opt"])
def test_without_a_fresh_root_the_child_still_starts_the_base_interpreter_without_site(
        name: str, place: Callable[[str], tuple[str, dict[str, str]]], tmp_path: Path) -> None:
    if not works("process-group"):
        pytest.skip("the process-group level does not work on this machine")
    python, env = place(name)
    report = grade_from(python, env, "process-group", tmp_path)
    seen = seen_by(report)
    venv = report["venv"]
    assert isinstance(venv, list) and venv
    assert not [p for p in (seen["executable"], seen["prefix"]) if any(p == v or p.startswith(v + "/") for v in venv)]
    assert seen["prefix"] == seen["base_prefix"]  # no pyvenv.cfg was found beside the binary
    assert seen["flags"] == [1, 1, True]  # -S -E -P
    assert not [p for p in seen["path"] if p.endswith(("site-packages", "dist-packages"))]
