"""Find the submissions in a folder: `.py` files, folders holding p07_scheduler.py, zips of those, and
folders holding a wire.toml (a program in another language, conformance/sandbox/program.py).

Every entry of the folder is accounted for: one that is not a usable submission still gets an
Entry with a `problem` (refused up front, with the reason), so it is graded 0 with that reason
instead of being lost or taking the class down. Nothing is followed or opened blindly: entries are
classified by lstat (a symlink, FIFO, socket or device is refused, never read), sizes are checked
before reading, names must decode, and zips give up only their p07_scheduler.py, under caps, after every
member name was checked. An entry's result folder is a slug (``slug``): its name when that is a plain
ASCII word, else an ASCII form of it with a hash of the original, so a name can reach no path, link or
file of the grader's, whatever it holds.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from conformance.sandbox.program import is_wire, read_wire_folder

MODULE = "p07_scheduler.py"
MODULE_MAX_BYTES = 1 << 20  # a module larger than this is refused (the grader reads it whole)
ZIP_MAX_BYTES = 20 << 20  # size of a zip file
ZIP_MAX_MEMBERS = 500
FOLDER_MAX_ENTRIES = 2000  # files and folders under one submission folder
FOLDER_MAX_BYTES = 64 << 20
FOLDER_MAX_DEPTH = 32
RESERVED = frozenset({"summary.csv", "overview.md", "overview.html"})  # files grade writes at the top of OUT
PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # a name that is its own slug ...
HASHED = re.compile(r".*-[0-9a-f]{10}")  # ... unless it has the shape slug gives a name it hashes
SLUG_BASE = 40  # characters of a slug's ASCII part; a hash of 10 hex digits follows


@dataclass(frozen=True, slots=True)
class Entry:
    name: str  # its result folder under OUT: the entry's name without .py/.zip (see result_names)
    source: Path  # what the instructor gave
    module: Path | None  # the p07_scheduler.py to grade (or a wire program's folder), None when there is none
    problem: str = ""  # why there is nothing to grade (refused up front)


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def check_module(path: Path, what: str, own_links: bool = False) -> str:
    """Why `path` cannot be graded as a module ("" if it can): not a plain file, too large, or linked.

    A folder's module with other hard links is refused (a shared inode is someone else's file); a
    top-level file may have links outside the class (``own_links``): sharing within it is checked later.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return f"{what} does not exist" if what != f"the folder's {MODULE}" else f"the folder holds no {MODULE}"
    except OSError as e:
        return f"{what} cannot be read: {e.strerror}"
    if not stat.S_ISREG(info.st_mode):
        return f"{what} is {kind_of(info.st_mode)}; submit the file itself"
    if info.st_size > MODULE_MAX_BYTES:
        return (f"{what} is too large: {info.st_size} bytes, more than the {MODULE_MAX_BYTES} allowed; submit the "
                "module only")
    if info.st_nlink > 1 and not own_links:
        return f"{what} is a hard link ({info.st_nlink} names for one file); submit a file of your own"
    return ""


def check_folder(path: Path) -> str:
    """Why a submission folder is refused ("" if it is fine): too many entries, too deep, too large."""
    todo, count, size = [(path, 0)], 0, 0
    while todo:
        folder, depth = todo.pop()
        if depth > FOLDER_MAX_DEPTH:
            return f"the folder is nested more than {FOLDER_MAX_DEPTH} levels deep; submit {MODULE} only"
        with os.scandir(folder) as it:
            for item in it:
                count += 1
                info = item.stat(follow_symlinks=False)
                size += info.st_size
                if count > FOLDER_MAX_ENTRIES or size > FOLDER_MAX_BYTES:
                    return (f"the folder is too large: more than {FOLDER_MAX_ENTRIES} entries or "
                            f"{FOLDER_MAX_BYTES >> 20} MB; submit {MODULE} only")
                if stat.S_ISDIR(info.st_mode):
                    todo.append((Path(item.path), depth + 1))
    return check_module(path / MODULE, f"the folder's {MODULE}")


def zip_module(path: Path, dest: Path) -> tuple[Path | None, str]:
    """Unpack the shallowest p07_scheduler.py of a zip into `dest`, after checking every member."""
    size = os.lstat(path).st_size
    if size > ZIP_MAX_BYTES:
        return None, f"the zip is too large: {size} bytes, more than {ZIP_MAX_BYTES}; zip the module only"
    with zipfile.ZipFile(path) as z:
        members = z.infolist()
        if len(members) > ZIP_MAX_MEMBERS:
            return None, f"the zip has too many members: {len(members)}, more than {ZIP_MAX_MEMBERS}"
        for m in members:
            name = PurePosixPath(m.filename)
            if m.filename.startswith("/") or name.is_absolute() or ".." in name.parts or "\\" in m.filename:
                return None, f"the zip member {m.filename[:100]!r} points outside the zip; zip the files themselves"
            if stat.S_ISLNK(m.external_attr >> 16):
                return None, f"the zip member {m.filename[:100]!r} is a symbolic link; zip the files themselves"
        found = sorted((m for m in members if PurePosixPath(m.filename).name == MODULE and not m.is_dir()
                        and "__MACOSX" not in PurePosixPath(m.filename).parts),
                       key=lambda m: (len(PurePosixPath(m.filename).parts), m.filename))
        if not found:
            return None, f"the zip holds no {MODULE}"
        m = found[0]
        if m.flag_bits & 0x1:
            return None, f"the zip's {m.filename[:100]!r} is encrypted; zip it without a password"
        if m.file_size > MODULE_MAX_BYTES:
            return None, f"the zip's {MODULE} is too large: {m.file_size} bytes, more than {MODULE_MAX_BYTES}"
        with z.open(m) as src:
            data = src.read(MODULE_MAX_BYTES + 1)
    if len(data) > MODULE_MAX_BYTES:
        return None, f"the zip's {MODULE} is too large: it unpacks to more than {MODULE_MAX_BYTES} bytes"
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / MODULE
    target.write_bytes(data)
    return target, ""


def classify(path: Path, workdir: Path, index: int) -> Entry:
    """One folder entry as an Entry; any failure reading it is this entry's problem, never the class's."""
    name = path.name
    stem = name[:-3] if name.endswith(".py") else name[:-4] if name.endswith(".zip") else name
    try:
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode) and is_wire(path):  # a program in another language
            problem = read_wire_folder(path, contents=False)[1]  # the sandbox reads the bytes when it runs it
            return Entry(name, path, None if problem else path, problem)
        if stat.S_ISDIR(info.st_mode):
            problem = check_folder(path)
            return Entry(name, path, None if problem else path / MODULE, problem)
        if not stat.S_ISREG(info.st_mode):
            return Entry(stem, path, None, f"refused: the entry is {kind_of(info.st_mode)}; submit a .py file, a "
                                           f"folder holding {MODULE}, or a .zip")
        if name.endswith(".py"):
            problem = check_module(path, "the file", own_links=True)
            return Entry(stem, path, None if problem else path, problem)
        if name.endswith(".zip"):
            module, problem = zip_module(path, workdir / f"zip-{index}")
            return Entry(stem, path, module, problem)
        return Entry(name, path, None, f"not a submission: expected a .py file, a folder holding {MODULE}, "
                                       "or a .zip of those")
    except Exception as e:  # noqa: BLE001 - corrupt zips raise many kinds (BadZipFile, NotImplementedError, zlib.error...)
        return Entry(stem, path, None, f"the entry cannot be read: {type(e).__name__}: {str(e)[:200]}")


def printable(name: str) -> str:
    """A result-folder name for any entry name: undecodable bytes shown as \\xNN, never a path separator."""
    return os.fsencode(name).decode("utf-8", "backslashreplace").replace("/", "_")


def tame(name: str) -> str:
    """The name with control characters (a terminal's escape sequences, CR, LF) shown as \\xNN and invisible
    ones (zero widths, bidirectional overrides, line separators) as \\uNNNN."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 32 or 127 <= ord(c) < 160 else
                   f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cf", "Zl", "Zp", "Cs") else c for c in name)


def slug(name: str) -> str:
    """An entry's result folder: the name itself when it is a plain word (ASCII letters, digits, ., _, - and
    not a file grading writes), else its ASCII letters and digits with a hash of the original bytes. So a folder
    name is never a path, a URL scheme (a dashboard link "javascript:..."), a reserved file or an invisible
    character, and two names differ as slugs whenever they differ. A plain name shaped like a hashed one ("Jose-"
    and 10 hex digits) is hashed too: no entry can take the folder another entry's name hashes to."""
    if PLAIN.fullmatch(name) and name.lower() not in RESERVED and not HASHED.fullmatch(name):
        return name
    ascii_part = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", ascii_part).strip("-._")[:SLUG_BASE].strip("-._") or "entry"
    return f"{base}-{hashlib.sha256(os.fsencode(name)).hexdigest()[:10]}"


def result_names(entries: list[Entry]) -> list[Entry]:
    """Give every entry its own result folder; refuse names that do not decode or that collide."""
    out: list[Entry] = []
    taken = set(RESERVED)
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.name] = counts.get(e.name, 0) + 1
    for e in entries:
        shown = printable(e.source.name)
        problem = ""
        if shown != e.source.name:
            problem = "refused: the entry's name is not valid UTF-8; rename it"
        elif counts[e.name] > 1:
            problem = f"refused: two entries would write to the result folder {tame(e.name)!r}; rename one"
        name = slug(e.source.name if problem else e.name)  # a folder name that paths, links and CSV take as is
        while name in taken:
            name += "~"
        taken.add(name)
        source = e.source.with_name(shown)  # a name reports can print; the undecodable path is never opened again
        out.append(Entry(name, source, None if problem else e.module, problem or e.problem))
    return out


def shared_files(entries: list[Entry]) -> list[Entry]:
    """Refuse an entry whose module is the same file (a hard link) as an entry before it by name."""
    seen: dict[tuple[int, int], str] = {}
    out = []
    for e in entries:
        if e.module is not None:
            try:
                info = os.lstat(e.module)
                key = (info.st_dev, info.st_ino)
            except OSError:
                key = (-1, len(seen))
            if key in seen:
                e = Entry(e.name, e.source, None, f"refused: the file is a hard link to entry {seen[key]!r}'s; "
                                                  "submit a file of your own")
            else:
                seen[key] = e.name
        out.append(e)
    return out


def collect(folder: str | Path, workdir: str | Path) -> list[Entry]:
    """Every entry of `folder` (dot-files aside), sorted by name; zips are unpacked under `workdir`."""
    folder, workdir = Path(folder), Path(workdir)
    if not folder.is_dir():
        raise NotADirectoryError(f"SUBMISSIONS must be a folder of submissions, got {str(folder)!r}")
    names = sorted(os.fsencode(n) for n in os.listdir(folder))
    paths = [folder / os.fsdecode(n) for n in names if not n.startswith(b".")]
    return shared_files(result_names([classify(p, workdir, i) for i, p in enumerate(paths)]))
