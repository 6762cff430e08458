# ruff: noqa
"""Try to leave things behind: files in /tmp, /dev/shm, /var/tmp, /sandbox, $HOME and /proc/1/root/tmp,
a FIFO, unix and abstract sockets, POSIX and System V shared memory, semaphores and message queues,
setsid, SIGTERM and SIGHUP ignored, a double-fork daemon, a thread, posix_spawn, a raw clone. Correct
scheduler otherwise.

Expected: 100, and nothing of it left in /tmp, /var/tmp, /dev/shm or System V IPC after the run.
"""

from __future__ import annotations

# ---- impl/scheduler.py is spliced in here (recipes.attack_source) ----

# ---- the attack ----
import zlib as _zlib

def _fingerprint(s):
    return _zlib.crc32(repr((s.num_blocks, s.block_size, s.max_num_seqs, s.max_num_batched_tokens, s.eos,
                             [(q.seq_id, q.prompt_len, q.max_tokens) for q in s.waiting])).encode())

import os as _os, socket as _socket, signal as _signal
_KEEP = []

def _t(fn):
    try:
        fn()
    except BaseException:  # noqa
        pass

def _litter():
    if _KEEP:
        return
    _KEEP.append(1)
    tag = "schedcheck-attack-litter-%d" % _os.getuid()
    for d in ("/tmp", "/dev/shm", "/var/tmp", "/sandbox", "/run", _os.environ.get("HOME", "/tmp"), "/proc/1/root/tmp"):
        _t(lambda d=d: open(f"{d}/{tag}", "w").write("x" * 1000))
    _t(lambda: _os.mkfifo(f"/tmp/{tag}.fifo"))
    def unix():
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        s.bind(f"/tmp/{tag}.sock")
        s.listen(1)
        _KEEP.append(s)
    _t(unix)
    def abstract():
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        s.bind("\0" + tag)
        s.listen(1)
        _KEEP.append(s)
    _t(abstract)
    def shm():
        from multiprocessing import shared_memory
        m = shared_memory.SharedMemory(name=tag, create=True, size=4096)
        _KEEP.append(m)
    _t(shm)
    def sysv():
        import ctypes
        libc = ctypes.CDLL(None)
        libc.shmget(0x5C4ED, 4096, 0o1666)
        libc.semget(0x5C4EE, 1, 0o1666)
        libc.msgget(0x5C4EF, 0o1666)
    _t(sysv)
    _t(lambda: _signal.signal(_signal.SIGTERM, _signal.SIG_IGN))
    _t(lambda: _signal.signal(_signal.SIGHUP, _signal.SIG_IGN))
    _t(_os.setsid)
    def fork():
        pid = _os.fork()
        if pid == 0:
            _os.setsid()
            if _os.fork() == 0:
                import time
                while True:
                    time.sleep(1)
            _os._exit(0)
    _t(fork)
    def thread():
        import threading, time
        threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
    _t(thread)
    _t(lambda: _os.posix_spawn("/bin/sleep", ["sleep", "3600"], {}))
    def vfork_ctypes():
        import ctypes
        libc = ctypes.CDLL(None)
        libc.syscall(56, 0x11, 0, 0, 0, 0)  # raw clone(SIGCHLD) without CLONE_THREAD
    _t(vfork_ctypes)


_Honest = Scheduler


class Scheduler(_Honest):  # noqa: F811 - wraps the correct one
    def schedule(self):
        if not self.__dict__.get('_hooked'):  # the first schedule() of each instance, before its order check
            self._hooked = True
            self._fp = _fingerprint(self)
            _litter()
        return super().schedule()
