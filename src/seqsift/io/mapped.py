"""Large regular files memory-mapped under a read lease, so a kernel reads the page cache itself
instead of a copy of it.

Reading a 512 MiB file into buffers cost more than searching it (2026-12-01, docs/benchmarks.md:
the copy and the first touch of fresh buffers took 0.26-0.41 s of CPU in a new job; the search
over a map 0.065 s, over the same bytes in memory 0.034 s). A plain map is unsafe: a file truncated while mapped kills the process with
SIGBUS on the next access past its new end, and Python cannot catch that. So the map is only made
under a read lease (fcntl F_SETLEASE, F_RDLCK): the kernel grants it only while no one has the
file open for writing, and another process that then opens it for writing or truncates it waits
(a non-blocking open fails with EAGAIN) until the lease is released. The lease is checked before
each chunk is handed out (`intact`); once a writer waits, the map is given up at the next chunk
and the rest of the file is read as usual, so the writer waits for at most one chunk's search.

Where no lease can be had (the file is open for writing somewhere, it belongs to another user and
the process lacks CAP_LEASE, the filesystem has no leases, or the lease-break signal is handled by
the program) `open_mapped` returns None and the caller reads the file instead.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import signal
import stat

# The lease-break notice goes to this signal, whose default action is to ignore it (the default,
# SIGIO, would end the process); the lease's state is read with F_GETLEASE, not from the signal.
_BREAK_SIGNAL = signal.SIGURG


class MappedFile:
    """A read-only map of a whole regular file under a read lease: `memory` is the map itself
    and `data` a numpy uint8 view of it (made on first use: a caller that passes the map to
    precompiled kernels as it is imports no numpy), valid while `intact` says no writer waits.
    close() gives up the map, then the lease."""

    def __init__(self, fd: int, size: int, memory: mmap.mmap):
        self.fd = fd
        self.size = size
        self._memory = memory
        self._held = False
        self._data = None

    @property
    def memory(self) -> mmap.mmap:
        return self._memory

    @property
    def data(self):
        if self._data is None and self._memory is not None:
            import numpy as np

            self._data = np.frombuffer(self._memory, np.uint8)
        return self._data

    @property
    def intact(self) -> bool:
        """True while the lease holds: no process waits to write to or truncate the file."""
        try:
            return fcntl.fcntl(self.fd, fcntl.F_GETLEASE) == fcntl.F_RDLCK
        except OSError:
            return False

    def held_while_mapped(self) -> "MappedFile":
        """Keep the lease for as long as the map exists, for data read over and over (a mapped
        index): the descriptor, and with it the lease, goes when the last view of `data` does, never
        before, so a writer waiting on the lease can never reach a page still viewed. close() is
        then a no-op; `intact` still tells a reader to stop reading."""
        import weakref  # here: only an index's map is held so; a search over files skips the import (~1 ms)

        weakref.finalize(self._memory, _close_quietly, self.fd)
        self._held = True
        return self

    def prefer_huge_pages(self) -> bool:
        """Ask the kernel for 2 MiB pages where it reads this file into the page cache (madvise
        MADV_HUGEPAGE): for data read at random all over a map of gigabytes (an FM-index's rank
        blocks), where with 4 KiB pages nearly every read misses the TLB and waits on a page-table
        walk as well as on memory. Only pages read from disk after this come as huge pages (a
        file already cached keeps the pages it has until the kernel drops them), and only where the
        kernel and filesystem make large page-cache folios; elsewhere the advice does nothing.
        Whether the kernel took the advice."""
        return self._advise("MADV_HUGEPAGE")  # EINVAL where the kernel has no transparent huge pages

    def read_ahead(self) -> bool:
        """Have the kernel start reading the whole file into the page cache now (madvise
        MADV_WILLNEED), for data then read at random (an FM-index's rank blocks and samples): page
        faults scattered over a file not yet cached read it piece by piece, the 3.2 GB index of 2.3
        Gbp in 53 s against 3.8 s read ahead first (2026-12-02, docs/benchmarks.md, "Genome
        scale"). Where the file is cached already the call costs ~0.1 ms; it returns at once and
        the reading goes on in the kernel. Not for files read once from start to end, where the
        kernel's own readahead does as well (find: measured the same). Whether the kernel took
        the advice."""
        return self._advise("MADV_WILLNEED")

    def _advise(self, name: str) -> bool:
        """madvise the whole map with mmap's constant `name`: whether this platform has it and
        the kernel took it."""
        advice = getattr(mmap, name, None)
        if advice is None or self._memory is None:
            return False
        try:
            self._memory.madvise(advice)
        except OSError:
            return False
        return True

    def close(self) -> None:
        """Unmap (once no view of `data` is left; else when the last one goes), then release the
        lease so a waiting writer goes on. Views must not be read after this."""
        if self.fd < 0 or self._held:
            return
        self._data = None
        try:
            self._memory.close()
        except BufferError:  # a caller still holds a view: the map goes with it
            pass
        self._memory = None
        try:
            fcntl.fcntl(self.fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = -1

    def __enter__(self) -> "MappedFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def open_mapped(path: str | os.PathLike, min_size: int = 0) -> MappedFile | None:
    """The file mapped under a read lease, or None where that is not safe or not worth it: not a
    regular file, smaller than min_size (or empty), no lease to be had. The open is non-blocking
    and its descriptor is the one checked (a fifo swapped in is never waited on); errors opening
    it are the caller's to report when it reads the file instead."""
    if signal.getsignal(_BREAK_SIGNAL) not in (signal.SIG_DFL, signal.SIG_IGN, None):
        return None  # the program handles the signal: a lease break must not call its handler
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return None
    memory = None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        fcntl.fcntl(fd, fcntl.F_SETSIG, _BREAK_SIGNAL)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        size = os.fstat(fd).st_size  # no writer from here on: the size holds while the lease does
        if size < max(min_size, 1):
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
            os.close(fd)
            return None
        # no MADV_SEQUENTIAL: it lets the kernel drop the pages once read, and a file searched
        # again would come from disk (MAP_POPULATE and MADV_WILLNEED measured the same as neither)
        memory = mmap.mmap(fd, size, prot=mmap.PROT_READ)
        return MappedFile(fd, size, memory)
    except (OSError, ValueError, OverflowError):  # EAGAIN: open for writing; EACCES, EINVAL: no lease here
        if memory is not None:
            memory.close()
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        except OSError:
            pass
        os.close(fd)
        return None
