"""Hostile entries that cannot be a plain file in the repository, built into a class folder on demand.

`build_class(dest, which)` writes a class folder: the honest classmates, every attack of
`submissions/` and every recipe below whose class in EXPECTED.toml is `which` ("main": graded
together; "solo": an attack that may break a whole class run, graded in a class of its own with
one honest classmate). Each recipe is a function with a docstring saying what it tries and what
the grader should do; it returns the name of the entry it made in the folder (for some recipes
the name is the attack itself: non-UTF-8 bytes, escapes, formulas).

Every recipe is harmless if the grader fails: links point at files that are only read, FIFOs are
only opened by the grader, zips claim sizes they do not hold (nothing expands past 1 MB here,
and the hidden-stream bomb expands to 150 MB only if something reads past its claimed size).
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import sys
import tomllib
import zlib
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[2]
IMPL = PROJECT / "impl" / "scheduler.py"
SUBMISSIONS = HERE / "submissions"
EXPECTED = HERE / "EXPECTED.toml"
MODULE = "p07_scheduler.py"
HONEST = ("honest_a", "honest_b", "honest_zip")

Recipe = Callable[[Path, bytes], str]
RECIPES: dict[str, Recipe] = {}


def recipe(fn: Recipe) -> Recipe:
    RECIPES[fn.__name__] = fn
    return fn


def expected() -> dict[str, dict[str, object]]:
    """EXPECTED.toml: attack id -> its expectation."""
    return tomllib.loads(EXPECTED.read_text())["attack"]


# --- zips written byte by byte, so headers can claim what they do not hold --------------------------


def zip_bytes(members: list[dict[str, object]]) -> bytes:
    """A zip archive; each member: name, data (the stored bytes), and optionally method, flags, crc,
    size (the claimed uncompressed size), mode (unix mode in the external attributes)."""
    out, central = bytearray(), bytearray()
    for m in members:
        name = str(m["name"]).encode("utf-8", "surrogateescape")
        data = bytes(m["data"])  # type: ignore[arg-type]
        method, flags = int(m.get("method", 0)), int(m.get("flags", 0))  # type: ignore[call-overload]
        crc = int(m.get("crc", zlib.crc32(data)))  # type: ignore[call-overload]
        size = int(m.get("size", len(data)))  # type: ignore[call-overload]
        mode = int(m.get("mode", 0o100644))  # type: ignore[call-overload]
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0x21, crc, len(data), size,
                           len(name), 0) + name + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, flags, method, 0, 0x21, crc,
                               len(data), size, len(name), 0, 0, 0, 0, mode << 16, offset) + name
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(out), 0)
    return bytes(out + central + eocd)


def deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


# --- honest classmates --------------------------------------------------------------------------------


def honest(dest: Path, source: bytes) -> dict[str, str]:
    """Three correct classmates, one of each form; each must score 100 in every class run."""
    (dest / "honest_a.py").write_bytes(source)
    (dest / "honest_b").mkdir()
    (dest / "honest_b" / MODULE).write_bytes(source)
    (dest / "honest_zip.zip").write_bytes(zip_bytes([{"name": f"honest_zip/{MODULE}", "data": source}]))
    return {"honest_a": "honest_a.py", "honest_b": "honest_b", "honest_zip": "honest_zip.zip"}


# --- reading what it must not -------------------------------------------------------------------------


@recipe
def read_symlink_impl(dest: Path, source: bytes) -> str:
    """A folder whose p07_scheduler.py is a symlink to the project's impl/scheduler.py.

    The grader reads the submission in its own process, outside the sandbox, so a link is followed
    with the grader's rights: the entry would be graded as the reference implementation.
    Expected: score 0, the entry refused because its module is a link (reason names the link).
    """
    (dest / "read_symlink_impl").mkdir()
    (dest / "read_symlink_impl" / MODULE).symlink_to(IMPL)
    return "read_symlink_impl"


@recipe
def read_symlink_classmate(dest: Path, source: bytes) -> str:
    """A folder whose p07_scheduler.py is a relative symlink to a classmate's file (../honest_a.py).

    Expected: score 0, refused because its module is a link; honest_a keeps its 100.
    """
    (dest / "read_symlink_classmate").mkdir()
    (dest / "read_symlink_classmate" / MODULE).symlink_to(Path("..") / "honest_a.py")
    return "read_symlink_classmate"


@recipe
def read_symlink_entry(dest: Path, source: bytes) -> str:
    """A top-level .py entry that is itself a symlink to the project's impl/scheduler.py.

    Expected: score 0, refused because the entry is a link.
    """
    (dest / "read_symlink_entry.py").symlink_to(IMPL)
    return "read_symlink_entry.py"


@recipe
def read_hardlink_classmate(dest: Path, source: bytes) -> str:
    """A folder whose p07_scheduler.py is a hard link to a classmate's file (honest_a.py).

    A hard link looks like a regular file; only its link count gives it away. (It can only be made
    on the grading machine, so the grader must not follow it blindly: a shared inode is a copy.)
    Expected: score 0, refused because the file has other links (st_nlink > 1).
    """
    (dest / "read_hardlink_classmate").mkdir()
    os.link(dest / "honest_a.py", dest / "read_hardlink_classmate" / MODULE)
    return "read_hardlink_classmate"


@recipe
def read_zip_dotdot(dest: Path, source: bytes) -> str:
    """A zip whose members climb out of the unpack folder: ../p07_scheduler.py and a/../../x.py.

    Expected: score 0, refused (reason says a member points outside the zip); nothing written
    outside the unpack folder.
    """
    stub = b"raise SystemExit('escaped zip member')\n"
    (dest / "read_zip_dotdot.zip").write_bytes(zip_bytes([
        {"name": f"../{MODULE}", "data": source}, {"name": "a/../../schedcheck-attack-zip-escape.py", "data": stub},
        {"name": MODULE, "data": stub}]))
    return "read_zip_dotdot.zip"


@recipe
def read_zip_symlink_member(dest: Path, source: bytes) -> str:
    """A zip whose p07_scheduler.py member is a symlink (unix mode 0o120777) to impl/scheduler.py.

    Expected: score 0, refused (reason says a member points outside the zip).
    """
    (dest / "read_zip_symlink_member.zip").write_bytes(zip_bytes([
        {"name": MODULE, "data": str(IMPL).encode(), "mode": 0o120777}]))
    return "read_zip_symlink_member.zip"


# --- crashing or hanging the class ----------------------------------------------------------------------


@recipe
def crash_long_name(dest: Path, source: bytes) -> str:
    """An honest submission whose file name is 240 characters long.

    Output paths are OUT/<name>/..., and a junit classname or CSV cell of that length must not
    break anything. Expected: graded as the correct scheduler it is: 100.
    """
    name = "crash_long_name_" + "x" * 224
    (dest / f"{name}.py").write_bytes(source)
    return f"{name}.py"


@recipe
def crash_deep_folder(dest: Path, source: bytes) -> str:
    """An honest folder submission that also holds a chain of 400 nested folders.

    Expected: graded as the correct scheduler it is (100) or refused with a reason (0); nothing
    walks the whole chain and the class run finishes.
    """
    root = dest / "crash_deep_folder"
    root.mkdir()
    (root / MODULE).write_bytes(source)
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(400):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    return "crash_deep_folder"


@recipe
def crash_fifo_in_folder(dest: Path, source: bytes) -> str:
    """A folder whose p07_scheduler.py is a FIFO (nobody ever writes to it).

    Expected: score 0, "holds no p07_scheduler.py" or "not a regular file"; nothing blocks on it.
    """
    (dest / "crash_fifo_in_folder").mkdir()
    os.mkfifo(dest / "crash_fifo_in_folder" / MODULE)
    return "crash_fifo_in_folder"


@recipe
def crash_socket_entry(dest: Path, source: bytes) -> str:
    """A top-level entry crash_socket_entry.py that is a bound unix socket file.

    Expected: score 0 with a reason (it cannot be read as a file); the class run finishes.
    """
    path = dest / "crash_socket_entry.py"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(str(path))
    finally:
        s.close()
    return "crash_socket_entry.py"


@recipe
def crash_zip_deep(dest: Path, source: bytes) -> str:
    """A zip whose only module sits 1500 folders deep (a path far past PATH_MAX).

    Unpacking makes each parent folder in turn (pathlib recurses once per level).
    Expected: graded as the module it holds (100) or refused with a reason (0); either way the
    class run finishes and classmates are graded.
    """
    (dest / "crash_zip_deep.zip").write_bytes(zip_bytes([{"name": "d/" * 1500 + MODULE, "data": source}]))
    return "crash_zip_deep.zip"


@recipe
def crash_zip_corrupt(dest: Path, source: bytes) -> str:
    """A .zip that is not a zip at all (random-looking bytes with a stray end-of-directory marker).

    Expected: score 0, reason says the zip cannot be read.
    """
    (dest / "crash_zip_corrupt.zip").write_bytes(os.urandom(3000) + b"PK\x05\x06" + b"\xff" * 18)
    return "crash_zip_corrupt.zip"


@recipe
def crash_zip_bomb_claim(dest: Path, source: bytes) -> str:
    """A zip with an honest p07_scheduler.py and a member claiming 1.9 GB uncompressed (it holds 1 KB).

    Expected: never expanded: refused by the size cap (0, the reason names the cap) or graded on its
    p07_scheduler.py alone with bomb.py skipped; the class run finishes.
    """
    (dest / "crash_zip_bomb_claim.zip").write_bytes(zip_bytes([
        {"name": MODULE, "data": source},
        {"name": "bomb.py", "data": deflate(b"#" * 1024), "method": 8, "size": 1_900_000_000,
         "crc": zlib.crc32(b"#" * 1024)}]))
    return "crash_zip_bomb_claim.zip"


@recipe
def crash_zip_bomb_hidden(dest: Path, source: bytes) -> str:
    """A zip whose p07_scheduler.py claims its honest size, but its deflate stream goes on for 150 MB.

    The claimed size and the CRC are those of the honest prefix, so a reader that stops at the
    claimed size gets the honest module; one that expands the whole stream expands 150 MB.
    Expected: graded as the honest module it claims: 100, and the hidden stream never expanded.
    """
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = bytearray(c.compress(source))
    zeros = b"\0" * (1 << 20)
    for _ in range(150):
        data += c.compress(zeros)
    data += c.flush()
    (dest / "crash_zip_bomb_hidden.zip").write_bytes(zip_bytes([
        {"name": MODULE, "data": bytes(data), "method": 8, "size": len(source), "crc": zlib.crc32(source)}]))
    return "crash_zip_bomb_hidden.zip"


@recipe
def crash_zip_encrypted(dest: Path, source: bytes) -> str:
    """A zip whose p07_scheduler.py is flagged encrypted (general purpose bit 0).

    zipfile raises RuntimeError ("password required") for it, which is not a BadZipFile.
    Expected: score 0 with a reason (encrypted); the class run finishes and classmates are graded.
    """
    (dest / "crash_zip_encrypted.zip").write_bytes(zip_bytes([{"name": MODULE, "data": source, "flags": 1}]))
    return "crash_zip_encrypted.zip"


@recipe
def crash_zip_method(dest: Path, source: bytes) -> str:
    """A zip whose p07_scheduler.py uses compression method 97 (not one zipfile knows).

    zipfile raises NotImplementedError for it. Expected: score 0 with a reason; the class run
    finishes and classmates are graded.
    """
    (dest / "crash_zip_method.zip").write_bytes(zip_bytes([{"name": MODULE, "data": source, "method": 97}]))
    return "crash_zip_method.zip"


@recipe
def crash_zip_bad_deflate(dest: Path, source: bytes) -> str:
    """A zip whose p07_scheduler.py is a deflate stream with an invalid block type.

    zlib raises zlib.error, which is neither BadZipFile nor OSError. Expected: score 0 with a
    reason; the class run finishes and classmates are graded.
    """
    (dest / "crash_zip_bad_deflate.zip").write_bytes(zip_bytes([
        {"name": MODULE, "data": b"\xff\xff\xff\xff" + deflate(source), "method": 8, "size": len(source),
         "crc": zlib.crc32(source)}]))
    return "crash_zip_bad_deflate.zip"


@recipe
def crash_fifo_entry(dest: Path, source: bytes) -> str:
    """A top-level entry crash_fifo_entry.py that is a FIFO nobody writes to.

    Reading it blocks forever: a grader that reads it as a file hangs the whole class.
    Expected: score 0, "not a regular file"; the class run finishes.
    """
    os.mkfifo(dest / "crash_fifo_entry.py")
    return "crash_fifo_entry.py"


@recipe
def crash_summary_csv_name(dest: Path, source: bytes) -> str:
    """An honest submission named summary.csv.py: its result folder would be OUT/summary.csv/.

    Expected: graded as the correct scheduler it is: 100 (or refused with a reason), and the run
    still writes OUT/summary.csv as a file with every entry.
    """
    (dest / "summary.csv.py").write_bytes(source)
    return "summary.csv.py"


@recipe
def crash_overview_name(dest: Path, source: bytes) -> str:
    """An honest folder submission named overview.md/: its result folder would be OUT/overview.md/.

    Expected: graded as the correct scheduler it is: 100 (or refused with a reason), and the run
    still writes OUT/overview.md as a file.
    """
    (dest / "overview.md").mkdir()
    (dest / "overview.md" / MODULE).write_bytes(source)
    return "overview.md"


@recipe
def crash_non_utf8_name(dest: Path, source: bytes) -> str:
    """An honest submission whose file name holds bytes that are not UTF-8 (b'bad\\xff\\xfe.py').

    Its name goes into report.md, results.json, junit.xml and summary.csv, all written as UTF-8.
    Expected: refused up front with a reason that says to rename it (score 0), every file written
    (name sanitised), the class run finishes. (Grading it under a sanitised name would also be safe;
    refusing is what the grading requirements ask for: the name would reach every report.)
    """
    Path(os.fsdecode(os.fsencode(dest) + b"/crash_non_utf8_name_\xff\xfe.py")).write_bytes(source)
    return os.fsdecode(b"crash_non_utf8_name_\xff\xfe.py")


@recipe
def crash_dup_name(dest: Path, source: bytes) -> str:
    """Two entries with one name: crash_dup_name.py and the folder crash_dup_name/ (both honest).

    Both would write OUT/crash_dup_name/. Expected: the class run still grades everyone (the two get
    distinct result folders, or the second is refused with a reason); never a refusal of the class.
    """
    (dest / "crash_dup_name.py").write_bytes(source)
    (dest / "crash_dup_name").mkdir()
    (dest / "crash_dup_name" / MODULE).write_bytes(source)
    return "crash_dup_name.py"


# --- tilting reports through the entry's name ------------------------------------------------------------


@recipe
def tilt_ansi_name(dest: Path, source: bytes) -> str:
    """An honest submission whose file name holds terminal escapes that paint a fake "PASSED 100".

    The name is printed on the grader's progress line and written into every output.
    Expected: graded as the correct scheduler it is: 100; no ESC character in any output.
    """
    name = "tilt_ansi_name\x1b[2K\r\x1b[32mPASSED 100 of 100\x1b[0m"
    (dest / f"{name}.py").write_bytes(source)
    return f"{name}.py"


@recipe
def tilt_csv_formula(dest: Path, source: bytes) -> str:
    """A submission named =HYPERLINK(...): a spreadsheet formula in summary.csv's first column.

    Opened in a spreadsheet, a cell starting with = is evaluated. It has no scheduler (it raises).
    Expected: score 0; the cell is neutralised (no line of summary.csv starts with "=").
    """
    name = '=HYPERLINK("http:schedcheck.invalid","grade 100")'
    (dest / f"{name}.py").write_bytes(b"raise ImportError('no scheduler: only the name is the attack')\n")
    return f"{name}.py"


@recipe
def tilt_markdown_name(dest: Path, source: bytes) -> str:
    """A submission whose name holds a newline and a Markdown table row with a fake full score.

    The name heads report.md ("# schedcheck report: <name>") and fills summary.csv. It has no
    scheduler (it raises). Expected: score 0; the name cannot start a line of its own in any output.
    """
    name = "tilt_markdown_name\n| fake | 100 of 100 | passed |"
    (dest / f"{name}.py").write_bytes(b"raise ImportError('no scheduler: only the name is the attack')\n")
    return f"{name}.py"


def build_class(dest: Path, which: str = "main", only: str | None = None) -> dict[str, str]:
    """Write a class folder: honest classmates plus the attacks of class `which` (or just `only`).

    Return attack id -> the name of its entry in the folder (a file or folder name).
    """
    dest.mkdir(parents=True, exist_ok=True)
    source = IMPL.read_bytes()
    made = honest(dest, source)
    for attack, exp in expected().items():
        if attack in HONEST or (only is not None and attack != only) or (only is None and exp.get("class") != which):
            continue
        if attack in RECIPES:
            made[attack] = RECIPES[attack](dest, source)
        else:
            (dest / f"{attack}.py").write_text(attack_source(SUBMISSIONS / f"{attack}.py"))
            made[attack] = f"{attack}.py"
    return made


SPLICE = "# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----"


def attack_source(path: Path) -> str:
    """The attack as a standalone submission: impl/scheduler.py's code put where the attack marks it.

    Attacks that wrap the correct scheduler keep one marker line instead of a copy of it, so the
    scheduler they wrap is always today's impl.
    """
    text = path.read_text()
    if SPLICE not in text:
        return text
    impl = IMPL.read_text()
    return text.replace(SPLICE, impl[impl.index("import enum"):])


def is_special(path: Path) -> bool:
    """A FIFO, socket or device: never opened by the test itself."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


if __name__ == "__main__":  # python tests/grading/attacks/recipes.py DEST [main|solo|ATTACK]
    target = Path(sys.argv[1])
    arg = sys.argv[2] if len(sys.argv) > 2 else "main"
    print(build_class(target, arg) if arg in ("main", "solo") else build_class(target, only=arg))
