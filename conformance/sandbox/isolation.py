"""Isolation levels for the sandbox child: detect what the machine allows, build the command, account, kill.

Three levels, best first (docs/sandbox.md says what each does not stop):
- ``bubblewrap``: ``bwrap`` builds a fresh root holding only the system's /usr (and the /bin, /lib
  links), the Python runtime and the run's directory (read-only); private /proc, /dev, and
  size-capped /tmp and /dev/shm; new PID, mount, network, IPC, UTS (and cgroup) namespaces.
- ``namespaces``: the same fresh root, built by our own script under ``unshare`` when bwrap is absent.
- ``process-group``: no namespaces (e.g. a container that forbids them); a new session, a subreaper
  supervisor and a sweep of every process of the run's uid (or token).
At every level the interpreter starts with no capabilities at all and no new privileges; when the
grader is root it also runs as a fresh unprivileged uid/gid (one per run, from UID_BASE), so files
that are not world-readable stay unreadable and RLIMIT_NPROC counts only the run's processes.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

LEVELS = ("bubblewrap", "namespaces", "process-group")
UID_BASE = 0x30000  # a range of unused uids: one per run keeps NPROC counts, sweeps and files apart
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # the runtime's system part
ROOT_SCRIPT = r"""
set -eu
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
r=$1; tmp=$2; shm=$3; run=$4; shift 4
mount --make-rprivate / 2>/dev/null || true
mount -t tmpfs -o mode=0755,size=1m schedcheck-root "$r"
while [ "$1" != "--" ]; do
  case "$1" in
    link) mkdir -p "$r$(dirname "$2")"; ln -s "$3" "$r$2"; shift 3;;
    bind) mkdir -p "$r$2"; mount --rbind "$2" "$r$2"; mount -o remount,bind,ro "$r$2"; shift 2;;
    mask) mount -t tmpfs -o mode=0555,size=4k schedcheck-hidden "$r$2" 2>/dev/null || true; shift 2;;
  esac
done
shift
mkdir -p "$r/proc" "$r/tmp" "$r/dev/shm" "$r/sandbox"
mount -t proc proc "$r/proc"
mount -t tmpfs -o mode=1777,size="$tmp" schedcheck-tmp "$r/tmp"
mount -t tmpfs -o mode=1777,size="$shm" schedcheck-shm "$r/dev/shm"
for d in null zero full random urandom; do touch "$r/dev/$d"; mount --bind "/dev/$d" "$r/dev/$d"; done
mount --bind "$run" "$r/sandbox"; mount -o remount,bind,ro "$r/sandbox"
mount -o remount,ro "$r"
hostname sandbox 2>/dev/null || true
cd /; exec chroot "$r" "$@"
"""


@dataclass(frozen=True, slots=True)
class Isolation:
    """The isolation level in force and what it gives; every result carries it."""

    level: str  # one of LEVELS
    pid_namespace: bool  # every descendant dies with the child; /proc shows only the sandbox
    non_root: bool  # the child's uid on the host is not root (RLIMIT_NPROC applies)
    network: bool  # the child can reach the network
    hides_project: bool  # the child's filesystem holds the runtime and its submission only
    user_namespace: bool = False  # the child runs in its own user namespace
    private_tmp: bool = False  # /tmp, /dev/shm and System V IPC are the run's own
    no_capabilities: bool = True  # the interpreter starts with empty capability sets

    def describe(self) -> str:
        parts = ["PID namespace" if self.pid_namespace else "process group + sweep",
                 "unprivileged uid" if self.non_root else "root uid (RLIMIT_NPROC not enforced)",
                 "no capabilities" if self.no_capabilities else "capabilities kept",
                 "no network" if not self.network else "network open",
                 "minimal root" if self.hides_project else "host filesystem visible",
                 "private /tmp and IPC" if self.private_tmp else "shared /tmp and IPC"]
        return f"{self.level}: " + ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Plan:
    """How to start one child: the argv prefix, the interpreter, the directory it sees, its uid."""

    argv: list[str]
    python: str
    workdir: str  # the run's directory as the child sees it (its cwd; holds the submission)
    uid: int | None  # the unprivileged uid the child runs as, None: the grader's own


def runtime_paths(python: str) -> list[str]:
    """The directories the interpreter needs beyond SYSTEM: its prefixes, outside /usr."""
    found = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(python)))}
    return sorted(p for p in found if not any((p + "/").startswith(s + "/") for s in SYSTEM))


def masked(python: str, project: str, hide: list[str]) -> list[str]:
    """Directories inside the bound runtime to cover with an empty tmpfs: installed packages, the project, extras.

    Anything outside the bound directories is simply absent from the fresh root, so it needs no cover.
    """
    bound = [s for s in SYSTEM if os.path.isdir(s) and not os.path.islink(s)] + runtime_paths(python)
    sites = [*site.getsitepackages(), site.getusersitepackages(), sysconfig.get_paths()["purelib"],
             sysconfig.get_paths()["platlib"], "/usr/lib/python3/dist-packages", project, *hide]
    found = {os.path.realpath(p) for p in sites if os.path.isdir(p)}
    return sorted(p for p in found if any((p + "/").startswith(b + "/") for b in bound))


def system_layout() -> list[tuple[str, str, str]]:
    """(kind, path, target) for SYSTEM: a link is recreated, a directory bound read-only."""
    out = []
    for path in SYSTEM:
        if os.path.islink(path):
            out.append(("link", path, os.readlink(path)))
        elif os.path.isdir(path):
            out.append(("bind", path, ""))
    return out


def drop(uid: int | None) -> list[str]:
    """setpriv: no capabilities in any set, no new privileges, and the run's uid/gid when we are root."""
    ids = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if uid is not None else []
    return ["setpriv", *ids, "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def bwrap_argv(uid: int | None, run_dir: str, python: str, project: str, hide: list[str], tmp_bytes: int) -> list[str]:
    argv = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox", "--tmpfs", "/"]
    if uid is None:
        argv[1:1] = ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    for kind, path, target in system_layout():
        argv += ["--symlink", target, path] if kind == "link" else ["--ro-bind", path, path]
    for path in runtime_paths(python):
        argv += ["--ro-bind", path, path]
    for path in masked(python, project, hide):
        argv += ["--perms", "0555", "--size", "4096", "--tmpfs", path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/tmp",
             "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/dev/shm",
             "--ro-bind", run_dir, "/sandbox", "--remount-ro", "/", "--chdir", "/sandbox", "--"]
    return argv + (drop(uid) if uid is not None else [])


def namespaces_argv(uid: int | None, run_dir: str, root_dir: str, python: str, project: str, hide: list[str],
                    tmp_bytes: int) -> list[str]:
    ns = ["unshare", "--pid", "--fork", "--mount", "--net", "--ipc", "--uts", "--propagation", "private"]
    if uid is None:
        ns[1:1] = ["--user", "--map-root-user"]
    layout: list[str] = []
    for kind, path, target in system_layout():
        layout += ["link", path, target] if kind == "link" else ["bind", path]
    for path in runtime_paths(python):
        layout += ["bind", path]
    for path in masked(python, project, hide):
        layout += ["mask", path]
    return [*ns, "--", "sh", "-c", ROOT_SCRIPT, "sh", root_dir, str(tmp_bytes), str(tmp_bytes), run_dir, *layout,
            "--", *drop(uid)]


def reachable(path: str) -> bool:
    """Whether an unprivileged stranger can reach and read `path` (every parent searchable by others)."""
    parts = Path(os.path.realpath(path)).parents
    return all(os.stat(p).st_mode & 0o001 for p in parts) and bool(os.stat(path).st_mode & 0o004)


def interpreter(level: str, root: bool) -> str | None:
    """The interpreter for this level: ours, or at process-group level as root a same-version one others can read."""
    mine = os.path.realpath(sys.executable)
    if level != "process-group" or not root or reachable(mine):
        return mine
    other = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}", path="/usr/bin:/bin")
    return other if other and reachable(other) else None


def plan(level: str, uid: int | None, run_dir: str, root_dir: str, project: str, hide: list[str],
         tmp_bytes: int) -> Plan | None:
    """The command for one child at this level, or None if the machine cannot run it."""
    python = interpreter(level, uid is not None)
    if python is None:
        return None
    if level == "bubblewrap":
        return Plan(bwrap_argv(uid, run_dir, python, project, hide, tmp_bytes), python, "/sandbox", uid)
    if level == "namespaces":
        return Plan(namespaces_argv(uid, run_dir, root_dir, python, project, hide, tmp_bytes), python, "/sandbox",
                    uid)
    return Plan(drop(uid), python, run_dir, uid)


_detected: dict[str, bool] = {}
PROBE = "import os; print(os.getpid() if os.path.isdir('/sandbox') else -os.getpid())"


def works(level: str) -> bool:
    """Whether this machine can start an interpreter at this level (probed once per process)."""
    if level not in _detected:
        import tempfile

        root = os.geteuid() == 0
        tools = {"bubblewrap": ["bwrap", "setpriv"], "namespaces": ["unshare", "sh", "mount", "chroot", "setpriv"],
                 "process-group": ["setpriv"]}[level]
        ok = all(shutil.which(t, path="/usr/bin:/bin:/usr/sbin:/sbin") for t in tools)
        with tempfile.TemporaryDirectory(prefix="schedcheck-probe-") as tmp:
            os.chmod(tmp, 0o755)
            for sub in ("run", "root"):
                os.mkdir(os.path.join(tmp, sub), 0o755)
            p = plan(level, UID_BASE if root else None, f"{tmp}/run", f"{tmp}/root", tmp, [], 1 << 20) if ok else None
            try:
                done = subprocess.run([*p.argv, p.python, "-S", "-c", PROBE], capture_output=True, timeout=20,
                                      env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}, cwd=p.workdir
                                      if level == "process-group" else "/") if p else None
                want = {"process-group": None}.get(level, b"")
                ok = done is not None and done.returncode == 0 and (
                    want is None or int(done.stdout.strip() or 0) > 0)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                ok = False
        _detected[level] = ok
    return _detected[level]


def detect(force: str | None = None) -> Isolation:
    """The best level this machine allows, or the forced one (ValueError if it does not work here)."""
    if force is not None and force not in LEVELS:
        raise ValueError(f"isolation must be one of {', '.join(LEVELS)}, got {force!r}")
    root = os.geteuid() == 0
    for level in (force,) if force else LEVELS:
        if works(level):
            ns = level != "process-group"
            return Isolation(level, ns, root or os.geteuid() != 0, not ns, ns, user_namespace=ns and not root,
                             private_tmp=ns)
    raise ValueError(f"isolation level {force!r} does not work on this machine (see docs/sandbox.md for what it "
                     "needs); leave it unset to use the best one")
