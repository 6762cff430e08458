"""Isolation levels for the sandbox child: detect what the machine allows, build the command, account, kill.

Three levels, best first (docs/sandbox.md says what each does not stop):
- ``bubblewrap``: ``bwrap`` builds a fresh root holding only the system's /usr (and the /bin, /lib
  links), the base interpreter's runtime (its binary, standard library and the shared libraries they
  load: never a file of a virtualenv, every site-packages covered) and the run's directory
  (read-only); private /proc, /dev, and size-capped /tmp and /dev/shm; new PID, mount, network, IPC,
  UTS (and cgroup) namespaces.
- ``namespaces``: the same fresh root, built by our own script under ``unshare`` when bwrap is absent.
- ``process-group``: no namespaces (e.g. a container that forbids them); a new session, a subreaper
  supervisor and a sweep of every process of the run's uid (or token).
At every level the child runs the base installation's interpreter (never a virtualenv's bin/python)
with no capabilities at all and no new privileges; when the grader is root it also runs as a fresh
unprivileged uid/gid (one per run, from UID_BASE), so files that are not world-readable stay
unreadable and RLIMIT_NPROC counts only the run's processes.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import struct
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
umask 022
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
r=$1; tmp=$2; shm=$3; run=$4; shift 4
mount --make-rprivate / 2>/dev/null || true
mount -t tmpfs -o mode=0755,size=1m schedcheck-root "$r"
while [ "$1" != "--" ]; do
  case "$1" in
    link) mkdir -p "$r$(dirname "$2")"; ln -s "$3" "$r$2"; shift 3;;
    dir) mkdir -p "$r$2"; shift 2;;
    bind) mkdir -p "$r$2"; mount --rbind "$2" "$r$2"; mount -o remount,bind,ro "$r$2"; shift 2;;
    file) mkdir -p "$r$(dirname "$2")"; : > "$r$2"; mount --bind "$2" "$r$2"; mount -o remount,bind,ro "$r$2"; shift 2;;
    cover) mount -t tmpfs -o mode=0555,size=4k schedcheck-hidden "$r$2" 2>/dev/null || true; shift 2;;
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


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies below it (by name: both are real paths)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def in_system(path: str) -> bool:
    """Whether `path` lies under SYSTEM, which every root holds anyway."""
    return any(inside(path, s) for s in SYSTEM)


def base_interpreter() -> str:
    """The real file of the base installation's interpreter, which the child runs at every level.

    A virtualenv's bin/python (a link to it, or a copy with pyvenv.cfg beside it) would start inside the
    virtualenv; the base binary finds its own standard library and nothing of the virtualenv.
    """
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    venv = os.path.realpath(sys.prefix) if sys.prefix != sys.base_prefix else None
    for candidate in (os.path.join(sys.base_exec_prefix, "bin", version), getattr(sys, "_base_executable", ""),
                      sys.executable):
        real = os.path.realpath(candidate) if candidate else ""
        if os.path.isfile(real) and os.access(real, os.X_OK) and not (venv and inside(real, venv)):
            return real
    return os.path.realpath(sys.executable)


# ELF class (1: 32-bit, 2: 64-bit): where e_phoff and e_phentsize lie in the header, the formats of e_phoff, of a
# program header and of a dynamic entry, and where p_type, p_offset, p_vaddr and p_filesz lie in a program header
ELF = {1: (28, 42, "I", "8I", "iI", (0, 1, 2, 4)), 2: (32, 54, "Q", "IIQQQQQQ", "qQ", (0, 2, 3, 5))}
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_RPATH, DT_RUNPATH = 1, 5, 10, 15, 29


def elf_links(path: str) -> tuple[list[str], list[str], str]:
    """An ELF file's needed libraries, its RPATH and RUNPATH folders (unexpanded) and its program interpreter.

    ([], [], "") for anything that is not a readable ELF file: it then needs nothing bound.
    """
    try:
        with open(path, "rb") as f:

            def read(at: int, n: int) -> bytes:
                f.seek(at)
                return f.read(n)

            head = read(0, 64)
            if head[:4] != b"\x7fELF" or head[4] not in ELF or head[5] not in (1, 2):
                return [], [], ""
            end = "<" if head[5] == 1 else ">"
            at_phoff, at_phentsize, word, header, entry, fields = ELF[head[4]]
            offset = struct.unpack_from(end + word, head, at_phoff)[0]
            size, count = struct.unpack_from(end + "HH", head, at_phentsize)
            table = read(offset, size * count)
            segments = [tuple(struct.unpack_from(end + header, table, i * size)[k] for k in fields)
                        for i in range(count)]  # (type, offset in the file, address, size in the file)
            interp = next((read(o, n).split(b"\0")[0].decode() for t, o, _, n in segments if t == PT_INTERP), "")
            dynamic = next(((o, n) for t, o, _, n in segments if t == PT_DYNAMIC), None)
            if dynamic is None:
                return [], [], interp
            width = struct.calcsize(end + entry)
            tags = list(struct.iter_unpack(end + entry, read(dynamic[0], dynamic[1] // width * width)))
            values = {tag: value for tag, value in tags if tag in (DT_STRTAB, DT_STRSZ)}
            strtab = next(o + values[DT_STRTAB] - a for t, o, a, n in segments
                          if t == PT_LOAD and a <= values[DT_STRTAB] < a + n)  # the table's address, as an offset
            strings = read(strtab, values[DT_STRSZ])

            def text(at: int) -> str:
                return strings[at:strings.index(b"\0", at)].decode()

            needed = [text(v) for t, v in tags if t == DT_NEEDED]
            folders = [d for t, v in tags if t in (DT_RPATH, DT_RUNPATH) for d in text(v).split(":") if d]
            return needed, folders, interp
    except (OSError, ValueError, KeyError, StopIteration, struct.error):
        return [], [], ""


def shared_libraries(binary: str, modules: list[str]) -> list[str]:
    """The shared libraries outside SYSTEM the loader finds for the binary and the extension modules (and for
    what those load in turn): a shared build's libpython, a conda environment's libffi or libssl.

    The loader finds a library outside SYSTEM only through an RPATH or RUNPATH (the child has no
    LD_LIBRARY_PATH and no /etc/ld.so.cache), so these are searched: the object's own, then the binary's
    (its RPATH serves everything it loads; searching its RUNPATH too at worst binds one library more).
    """
    def expand(name: str, origin: str) -> str:
        return os.path.normpath(name.replace("${ORIGIN}", origin).replace("$ORIGIN", origin))

    found: list[str] = []
    seen, todo = {binary, *modules}, [binary, *modules]
    first = [(folder, os.path.dirname(binary)) for folder in elf_links(binary)[1]]
    while todo:
        path = todo.pop()
        needed, folders, interp = elf_links(path)
        if interp and not in_system(interp) and interp not in seen:
            seen.add(interp)
            found.append(interp)
        for name in needed:
            places = [(f, os.path.dirname(path)) for f in folders] + first
            candidates = ([expand(name, os.path.dirname(path))] if "/" in name  # a path: no search
                          else [expand(os.path.join(folder, name), origin) for folder, origin in places])
            lib = next((c for c in candidates if os.path.isabs(c) and os.path.isfile(c)), None)
            if lib is not None and lib not in seen:
                seen.add(lib)
                todo.append(lib)
                if not in_system(lib):
                    found.append(lib)
    return found


@functools.cache
def runtime(python: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(folders, files) the base interpreter `python` needs beyond SYSTEM, each bound read-only at its own path.

    Only the runtime: the binary, the standard library (where the interpreter looks for it: the base's
    <platlibdir>/pythonX.Y, its lib-dynload and zipped form) and the shared libraries they load. Neither
    the rest of the base installation (its bin/, console scripts) nor any file of a virtualenv is bound,
    so they are absent from the root; the site-packages inside the standard library is covered (covered()).
    """
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    stdlib = os.path.realpath(os.path.join(sys.base_prefix, sys.platlibdir, f"python{version}"))
    dynload = os.path.realpath(os.path.join(sys.base_exec_prefix, sys.platlibdir, f"python{version}", "lib-dynload"))
    zipped = os.path.join(os.path.dirname(stdlib), f"python{version.replace('.', '')}.zip")
    folders = [p for p in (stdlib, dynload) if os.path.isdir(p) and not in_system(p)]
    folders = [p for p in folders if not any(inside(p, q) and p != q for q in folders)]
    modules = sorted(str(p) for p in Path(dynload).glob("*.so")) if os.path.isdir(dynload) else []
    libraries = shared_libraries(python, modules) if not in_system(python) else []
    files = [p for p in (python, zipped, *libraries) if os.path.isfile(p) and not in_system(p)]
    return tuple(folders), tuple(dict.fromkeys(p for p in files if not any(inside(p, q) for q in folders)))


def covered(bound: list[str], project: str, hide: list[str]) -> list[str]:
    """Folders inside the bound ones to cover with an empty tmpfs: every site-packages and dist-packages a
    Python of this version could import from (the base's, a virtualenv's, the user's, the system's), a
    virtualenv or the project when it lies inside a bound folder (/usr/local/venv), and `hide`.

    Anything outside the bound folders is absent from the root and needs no cover.
    """
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    prefixes = {sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix, "/usr", "/usr/local"}
    sites = [os.path.join(p, lib, v, name) for p in prefixes for lib in {"lib", sys.platlibdir}
             for v in (version, "python3") for name in ("site-packages", "dist-packages")]
    sites += [*site.getsitepackages(), *site.getsitepackages([sys.base_prefix, sys.base_exec_prefix]),
              site.getusersitepackages(), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    venv = [sys.prefix, sys.exec_prefix] if sys.prefix != sys.base_prefix else []
    found = {os.path.realpath(p) for p in (*sites, *venv, project, *hide) if os.path.isdir(p)}
    return sorted(p for p in found if any(inside(p, b) and p != b for b in bound))


def layout(python: str, project: str, hide: list[str]) -> list[tuple[str, str, str]]:
    """The child's root in mount order, as (kind, path, target).

    `link`: a symlink to target (/bin, /lib on a merged-/usr system); `dir`: an empty folder, 0755 so the
    run's uid can pass through to what is bound below it; `bind` a folder and `file` a file, read-only at
    their own path; `cover`: an empty read-only tmpfs over a folder inside a bound one.
    """
    out = [("link", path, os.readlink(path)) if os.path.islink(path) else ("bind", path, "")
           for path in SYSTEM if os.path.islink(path) or os.path.isdir(path)]
    folders, files = runtime(python)
    parents = {str(a) for p in (*folders, *files) for a in Path(p).parents if str(a) != "/"}
    out += [("dir", p, "") for p in sorted(parents)]
    out += [("bind", p, "") for p in folders] + [("file", p, "") for p in files]
    bound = [p for kind, p, _ in out if kind == "bind"]
    return out + [("cover", p, "") for p in covered(bound, project, hide)]


def drop(uid: int | None) -> list[str]:
    """setpriv: no capabilities in any set, no new privileges, and the run's uid/gid when we are root."""
    ids = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if uid is not None else []
    return ["setpriv", *ids, "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def bwrap_argv(uid: int | None, run_dir: str, python: str, project: str, hide: list[str], tmp_bytes: int) -> list[str]:
    argv = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox", "--tmpfs", "/"]
    if uid is None:
        argv[1:1] = ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    for kind, path, target in layout(python, project, hide):
        argv += {"link": ["--symlink", target, path], "dir": ["--perms", "0755", "--dir", path],
                 "bind": ["--ro-bind", path, path], "file": ["--ro-bind", path, path],
                 "cover": ["--perms", "0555", "--size", "4096", "--tmpfs", path]}[kind]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/tmp",
             "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/dev/shm",
             "--ro-bind", run_dir, "/sandbox", "--remount-ro", "/", "--chdir", "/sandbox", "--"]
    return argv + (drop(uid) if uid is not None else [])


def namespaces_argv(uid: int | None, run_dir: str, root_dir: str, python: str, project: str, hide: list[str],
                    tmp_bytes: int) -> list[str]:
    ns = ["unshare", "--pid", "--fork", "--mount", "--net", "--ipc", "--uts", "--propagation", "private"]
    if uid is None:
        ns[1:1] = ["--user", "--map-root-user"]
    steps = [word for kind, path, target in layout(python, project, hide)
             for word in ((kind, path, target) if kind == "link" else (kind, path))]
    return [*ns, "--", "sh", "-c", ROOT_SCRIPT, "sh", root_dir, str(tmp_bytes), str(tmp_bytes), run_dir, *steps,
            "--", *drop(uid)]


def reachable(path: str) -> bool:
    """Whether an unprivileged stranger can reach and read `path` (every parent searchable by others)."""
    parts = Path(os.path.realpath(path)).parents
    return all(os.stat(p).st_mode & 0o001 for p in parts) and bool(os.stat(path).st_mode & 0o004)


def interpreter(level: str, root: bool) -> str | None:
    """The interpreter for this level: the base one (base_interpreter), or at process-group level as root a
    same-version one others can read."""
    mine = base_interpreter()
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
