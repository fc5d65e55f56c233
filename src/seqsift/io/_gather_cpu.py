"""The compiled read loop of io/gather.py: small files opened, read one after another into one
buffer and closed by calls into the C library, with no Python between two files (gather.py
calls it precompiled, see precompiled.py)."""

from numba import njit, types

from seqsift.io.gather import ALONE, DONE, ROOM

# The C library's own functions, linked by name (as Numba's code links its helpers): the
# prototypes of x86-64 and aarch64 Linux, where off_t and ssize_t are 64 bits. open() is
# variadic in C; its third argument (the mode) is read only with O_CREAT, which is never given.
_open = types.ExternalFunction("open", types.int32(types.uint64, types.int32))
_lseek = types.ExternalFunction("lseek", types.int64(types.int32, types.int64, types.int32))
_pread = types.ExternalFunction("pread", types.int64(types.int32, types.uint64, types.uint64, types.int64))
_close = types.ExternalFunction("close", types.int32(types.int32))
_SEEK_END = 2


@njit(nogil=True, cache=True)
def gather(names, starts, first, flags, buffer, used, largest, los, his):
    """Read files first, first + 1, ... whole into buffer[used:], each right after the one
    before, and set los[k], his[k] to where file k lies; stop at the first file that is not for
    this loop; a file of more than `largest` bytes is passed over (los[k] = his[k] = -1: the
    caller searches it alone). Returns (k, used, why): k the first file not read, used the bytes
    of the buffer in use, why DONE (every file read), ROOM (file k may fit an emptied buffer) or
    ALONE (file k is for the caller: standard input, an open or a read that fails, anything
    lseek cannot size as a file, or one whose read does not give the bytes lseek said: it
    changed, or it is a pseudo-file such as procfs's, sized 0). A file's name is the
    NUL-terminated bytes of names from starts[k] (below 0: standard input)."""
    room = buffer.size
    base = buffer.ctypes.data
    k = first
    while k < starts.size:
        if starts[k] < 0:
            return k, used, ALONE
        fd = _open(names.ctypes.data + starts[k], flags)
        if fd < 0:
            return k, used, ALONE
        size = _lseek(fd, 0, _SEEK_END)  # a fifo, a socket or a terminal fails here (ESPIPE)
        if size > largest:  # large: searched alone, after this buffer
            _close(fd)
            los[k] = -1
            his[k] = -1
            k += 1
            continue
        if size < 0 or size >= room:
            _close(fd)
            return k, used, ALONE
        if used + size >= room:  # the room left must exceed the size: a file that grew shows
            _close(fd)
            return k, used, ROOM
        got = 0
        failed = False
        while used + got < room:
            want = room - used - got
            n = _pread(fd, base + used + got, want, got)  # a directory fails here (EISDIR)
            if n < 0:
                failed = True
                break
            got += n
            if n == 0 or (n < want and got >= size):  # a short read ending at its size: the end
                break
        _close(fd)
        if failed or got != size:  # not what lseek said: it changed, or a pseudo-file (procfs): the caller's
            return k, used, ALONE
        los[k] = used
        his[k] = used + got
        used += got
        k += 1
    return k, used, DONE
