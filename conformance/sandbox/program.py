"""A submission in another language: a folder whose ``wire.toml`` names the command that starts it.

``wire.toml`` holds one key, ``command``: a list of strings, or one string split as a shell would
(``shlex.split``, no shell runs it). The program speaks docs/wire-protocol.md on stdin and stdout;
in the sandbox it runs in the read-only folder ``/sandbox`` (a copy of the submission folder) with
PATH ``/usr/bin:/bin``. The folder is read here, once, without following links and under caps, so
the child gets bytes, never a path into the grader's filesystem.
"""

from __future__ import annotations

import os
import shlex
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path

WIRE_FILE = "wire.toml"
WIRE_MAX_BYTES = 16 << 20  # every file of the folder together
WIRE_MAX_FILES = 500
WIRE_MAX_DEPTH = 16
WIRE_PROCESSES = 64  # RLIMIT_NPROC for a wire program: itself, and the threads a runtime starts (Node.js, a JVM)


@dataclass(frozen=True, slots=True)
class WireProgram:
    """The folder's files (relative path, bytes, executable) and the command, as the child will run them."""

    files: tuple[tuple[str, bytes, bool], ...]
    argv: tuple[str, ...]


def wire_command(text: str) -> tuple[tuple[str, ...], str]:
    """The argv that wire.toml declares, or () and why it cannot be used."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return (), f"{WIRE_FILE} is not valid TOML: {e}"
    except RecursionError:
        return (), f"{WIRE_FILE} is nested too deeply to read; it holds command = [...] only"
    command = doc.get("command")
    if isinstance(command, str):
        try:
            argv = tuple(shlex.split(command))
        except ValueError as e:
            return (), f"{WIRE_FILE}: command = {command[:100]!r} cannot be split: {e}"
    elif isinstance(command, list) and all(isinstance(a, str) for a in command):
        argv = tuple(command)
    else:
        return (), (f"{WIRE_FILE} needs command = \"./run\" or command = [\"node\", \"scheduler.js\"] "
                    f"(a string or a list of strings), got {command!r:.100}")
    if not argv or not argv[0]:
        return (), f"{WIRE_FILE}: command is empty; name the program that speaks docs/wire-protocol.md"
    if any("\0" in a for a in argv):
        return (), f"{WIRE_FILE}: command holds a NUL character"
    unknown = sorted(set(doc) - {"command"})
    if unknown:
        return (), f"{WIRE_FILE} has unknown keys {unknown}; it takes command only"
    return argv, ""


def is_wire(folder: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(folder / WIRE_FILE).st_mode)
    except OSError:
        return False


def read_regular(path: Path, left: int) -> tuple[bytes, bool]:
    """A regular file's bytes and executable bit, opened without following a link; at most `left` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name!r} is not a regular file")
        return f.read(left + 1), bool(info.st_mode & 0o111)


def read_wire_folder(folder: str | Path, contents: bool = True) -> tuple[WireProgram | None, str]:
    """The program in `folder`, or None and why not: links, FIFOs and devices refused, sizes capped.

    With contents=False (collection: is it gradable?) only wire.toml is read; the others are checked
    by lstat, and the program comes back without their bytes."""
    root = Path(folder)
    files: list[tuple[str, bytes, bool]] = []
    todo, left = [(root, 0)], WIRE_MAX_BYTES
    try:
        while todo:
            here, depth = todo.pop()
            if depth > WIRE_MAX_DEPTH:
                return None, f"the folder is nested more than {WIRE_MAX_DEPTH} levels deep"
            for name in sorted(os.listdir(here)):
                path, rel = here / name, (here / name).relative_to(root).as_posix()
                info = os.lstat(path)
                if stat.S_ISDIR(info.st_mode):
                    todo.append((path, depth + 1))
                    continue
                if not stat.S_ISREG(info.st_mode):
                    return None, f"the folder's {rel[:100]!r} is not a regular file (a link, FIFO or device); " \
                                 "submit the files themselves"
                if info.st_nlink > 1:  # another name for the same file may be outside the folder: someone else's
                    return None, f"the folder's {rel[:100]!r} is a hard link ({info.st_nlink} names for one " \
                                 "file); submit a file of your own"
                if contents or rel == WIRE_FILE:
                    data, executable = read_regular(path, left)
                else:
                    data, executable = b"", bool(info.st_mode & 0o111)
                left -= len(data) if contents or rel == WIRE_FILE else info.st_size
                if left < 0 or len(files) >= WIRE_MAX_FILES:
                    return None, (f"the folder is too large: more than {WIRE_MAX_FILES} files or "
                                  f"{WIRE_MAX_BYTES >> 20} MB; submit the program and what it needs to run")
                files.append((rel, data, executable))
    except (OSError, ValueError) as e:
        return None, f"the folder cannot be read: {e}"
    text = next((data for rel, data, _ in files if rel == WIRE_FILE), b"")
    try:
        argv, problem = wire_command(text.decode())
    except UnicodeDecodeError:
        return None, f"{WIRE_FILE} is not UTF-8 text"
    return (WireProgram(tuple(files), argv), "") if not problem else (None, problem)
