"""Open inputs by path or '-' (stdin), with errors that name the path.

Compression is recognised by magic bytes, not by file name, so a gzipped file
named .fa still reads and a plain file named .gz is not misread.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import sys

from seqsift.errors import FormatError, InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~6 ms of a start)
if TYPE_CHECKING:
    from typing import BinaryIO, Iterator

STDIN = "-"  # the name that means standard input, wherever a path is taken
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))
PIECE = 256 << 10  # read_or_raise's read size: what a failing decompressor may lose
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


def _decompression_errors() -> tuple:
    """What a failing decompressor raises. The decompressors' modules are imported only by a
    command that reads compressed input (a search over plain files never does)."""
    import lzma

    from isal import isal_zlib

    return (EOFError, OSError, isal_zlib.error, lzma.LZMAError, ValueError)


def __getattr__(name: str):
    if name == "DECOMPRESSION_ERRORS":  # made on first use (_decompression_errors)
        globals()[name] = errors = _decompression_errors()
        return errors
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def display_name(path: str | os.PathLike) -> str:
    return "(standard input)" if str(path) == STDIN else os.fspath(path)


def check_readable(path: str | os.PathLike) -> None:
    """Raise InputError unless path is stdin or a regular, readable file (no side effects)."""
    if str(path) == STDIN:
        return
    _named_stat(path)
    if not os.access(path, os.R_OK):
        raise InputError(os.fspath(path), "permission denied")


def named_regular(path: str | os.PathLike) -> bool:
    """A path named to a command that reads files as grep does, checked with one stat: True for a
    regular file, False for standard input, a fifo or a device (they stream); InputError for a
    missing path or a directory. Read permission is left to the open, which names a file it cannot
    read, as for a walk's files: check_readable's os.access and the search's second stat cost
    8,364 files named on a command line ~0.05 s (2026-12-02)."""
    return str(path) != STDIN and stat.S_ISREG(_named_stat(path).st_mode)


def _named_stat(path: str | os.PathLike) -> os.stat_result:
    """os.stat of a path named to a command; InputError for a missing path or a directory."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(p, "no such file") from None
    except OSError as exc:
        raise InputError(p, exc.strerror or str(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(p, "is a directory")
    return st


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words, for the message that skips it."""
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a fifo" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"


def open_regular_fd(path: str | os.PathLike) -> tuple[int, int]:
    """(descriptor, size) of a regular file, checked on the descriptor itself: opened with
    O_NONBLOCK (opening a fifo swapped in after a walk's stat would otherwise block for ever), then
    fstat, the one stat of the file; anything but a regular file is an InputError saying what it
    is (OSError for an open that fails), so what was checked is what is read. The descriptor stays
    non-blocking, which reads of a regular file ignore (read_fd retries in blocking mode should a
    filesystem answer EAGAIN): one fcntl a file less."""
    p = os.fspath(path)
    fd = os.open(p, OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(p, f"is {file_kind(st.st_mode)}, not a regular file")
        return fd, st.st_size
    except BaseException:
        os.close(fd)
        raise


def read_fd(fd: int, view) -> int:
    """os.readv into view (no intermediate bytes object) on a descriptor of open_regular_fd."""
    try:
        return os.readv(fd, (view,))
    except BlockingIOError:  # a filesystem that honours O_NONBLOCK on regular files
        os.set_blocking(fd, True)
        return os.readv(fd, (view,))


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """An unbuffered binary stream of a regular file, checked as open_regular_fd checks it."""
    fd, _ = open_regular_fd(path)
    try:
        os.set_blocking(fd, True)
        return open(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def open_binary(path: str | os.PathLike) -> BinaryIO:
    """An unbuffered-ish binary stream for a path or '-', for readinto-based chunking."""
    check_readable(path)
    if str(path) == STDIN:
        return sys.stdin.buffer
    p = os.fspath(path)
    try:
        return open(p, "rb", buffering=0)
    except OSError as exc:
        raise InputError(p, exc.strerror or str(exc)) from None


def read_small(path: str | os.PathLike, limit: int) -> bytes:
    """Up to `limit` bytes of a small file read whole (a scoring matrix), errors naming the path."""
    stream = open_binary(path)
    try:
        return stream.read(limit)
    except OSError as exc:
        raise InputError(display_name(path), f"read failed: {exc.strerror or exc}") from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def read_range(path: str | os.PathLike, start: int, size: int, shown: str | None = None) -> bytes:
    """Up to `size` bytes of a file from offset `start` (fewer at its end): a byte range of a file
    every Dask worker sees, read by the worker; an error names the file as the user gave it."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            return f.read(size)
    except OSError as exc:
        raise InputError(shown or display_name(path), f"cannot read: {exc.strerror or exc}") from None


def sniff_compression(head: bytes) -> str | None:
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def open_decompressed(path: str | os.PathLike) -> BinaryIO:
    """A binary stream of the decompressed content of a plain, gzip, bzip2 or xz file or stdin."""
    raw = open_binary(path)
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw, 1 << 20)
    kind = sniff_compression(buffered.peek(6)[:6])
    if kind == "gzip":  # ISA-L's inflate: 2-3x the standard library's on reads files
        from isal import igzip

        return igzip.IGzipFile(fileobj=buffered, mode="rb")
    if kind == "bzip2":
        import bz2

        return bz2.BZ2File(buffered, mode="rb")
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(buffered, mode="rb")
    return buffered


def read_or_raise(stream: BinaryIO, size: int, path: str, line: int = 0) -> bytes:
    """stream.read(size) (size < 0: to the end), turning a decompression failure into a FormatError
    naming the file and the line it broke in: `line` is where the read started, and it is read in
    pieces so the lines of the pieces delivered before the failure are not lost with it."""
    pieces, got = [], 0
    try:
        while size < 0 or got < size:
            piece = stream.read1(PIECE if size < 0 else min(PIECE, size - got))
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
    except _decompression_errors() as exc:
        raise decompression_failed(path, line + sum(p.count(b"\n") for p in pieces), exc) from None
    return b"".join(pieces)


def decompression_failed(path: str, line: int, exc: BaseException) -> FormatError:
    """The error for a stream that broke (truncated, corrupt, a read failure) at `line`."""
    return FormatError(display_name(path), line, f"cannot read or decompress: {exc}")


def stdin_file() -> str | None:
    """A name that opens standard input afresh (/dev/fd/0) when it is a regular file not yet read
    from (`seqsift ... < file`): such input is read like a named file, spooled nowhere and mapped
    when large. None for a pipe, a terminal, a device, or input already part read."""
    try:
        fd = sys.stdin.fileno()
        if not stat.S_ISREG(os.fstat(fd).st_mode) or os.lseek(fd, 0, os.SEEK_CUR) != 0:
            return None
    except (OSError, ValueError, AttributeError):  # no stdin, or one without a descriptor
        return None
    name = f"/dev/fd/{fd}"
    return name if os.path.exists(name) else None


def spool_stdin(directory: str | None = None) -> str:
    """Standard input copied to a temporary file, for consumers that need a size (scan's EOF-n
    offsets) or to read their input more than once (align's database in parts). The caller
    deletes it; spooled_stdin does that itself."""
    import shutil
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix="seqsift-stdin.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


@contextlib.contextmanager
def spooled_stdin(path: str | os.PathLike) -> Iterator[str | os.PathLike]:
    """`path` itself, or for STDIN the file it redirects from (stdin_file) or else a spool file of
    standard input, removed afterwards."""
    if str(path) != STDIN:
        yield path
        return
    if (name := stdin_file()) is not None:
        yield name
        return
    tmp = spool_stdin()
    try:
        yield tmp
    finally:
        os.unlink(tmp)
