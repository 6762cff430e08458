# ruff: noqa: F821  (appended to impl/scheduler.py, which defines Scheduler)
"""Read a file by handle (open_by_handle_at), which needs CAP_DAC_READ_SEARCH, and hide nothing.

Expected: ok (no capability: the call fails with EPERM); had it worked, schedule() returns a list.
"""
import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_handle = ctypes.create_string_buffer(8 + 128)
ctypes.memmove(_handle, (128).to_bytes(4, "little"), 4)
_mount = ctypes.c_int()
_fd = -1
if _libc.name_to_handle_at(-100, b"/usr/bin", _handle, ctypes.byref(_mount), 0) == 0:
    _dir = os.open("/usr", os.O_RDONLY)
    _fd = _libc.open_by_handle_at(_dir, _handle, os.O_RDONLY)
if _fd >= 0:
    Scheduler.schedule = lambda self: []
