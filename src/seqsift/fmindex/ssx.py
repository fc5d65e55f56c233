"""The .ssx index file: one file, memory-mapped on load (under a read lease), safe to open when it
is not ours.

Layout (docs/formats.md): a 32-byte preamble (magic, format version, header length, header
CRC-32), a JSON header (parameters, records, and per array its dtype, shape, offset and
CRC-32), then the arrays, each 64-byte aligned. Loading maps the file and views the arrays in
place; nothing is unpickled. Every checksum is verified, and then the invariants the kernels
rely on (counts, row numbers, positions in range), so a damaged or crafted file is an error,
never an out-of-bounds read; those that read whole arrays run once per unchanged file (checked.py).
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass

import numpy as np
from isal.isal_zlib import crc32

from seqsift import __version__
from seqsift.errors import InputError
from seqsift.fmindex import checked
from seqsift.fmindex.layout import MAX_KMER, MAX_TEXT, NARROW, WORDS, IndexArrays
from seqsift.fmindex.reference import Reference
from seqsift.fmindex.spill import Spill
from seqsift.io.mapped import MappedFile, open_mapped
from seqsift.io.openers import check_readable, display_name, open_regular_fd, read_fd
from seqsift.io.writers import atomic_output
from seqsift.precompiled import Kernel

MAGIC = b"SSXFMIDX"
VERSION = 1
PREAMBLE = struct.Struct("<8sIII12x")  # magic, version, header length, header crc32
ALIGN = 64
MAX_HEADER = 1 << 28
# An index at least this large leaves the page cache once written (_drop_written_pages): read back
# from disk by its first search, it is cached in huge pages (2.3 Gbp, docs/benchmarks.md).
DROP_BEHIND = 256 << 20
ARRAYS = {  # name: the dtype each array has (samples and k-mer rows: "<u8" in a wide index)
    "blocks": "<u8", "samples": "<u4", "kmer_table": "<u4", "packed": "u1", "gaps": "<i8",
    "starts": "<i8", "lengths": "<i8",
}
WIDE = ("samples", "kmer_table")


def _dtype(name: str, wide: bool) -> str:
    return "<u8" if wide and name in WIDE else ARRAYS[name]


@dataclass(frozen=True)
class LoadedIndex:
    reference: Reference
    arrays: IndexArrays
    header: dict
    watch: "Watch | None" = None


class Watch:
    """The mapped file, watched through the read lease it is mapped under (io/mapped.py): while
    the map exists no process can write to or truncate the file (its open or truncate waits on
    the lease), so a page the kernels read can never vanish (SIGBUS). A writer waiting is seen
    before and after each batch, and the search stops with an error naming the file instead of
    reading it again; the writer goes on once this process lets go of the map. A file replaced by
    rename, as `seqsift index` writes, leaves the mapped one whole and is no change here."""

    def __init__(self, mapped: MappedFile, name: str):
        self.mapped, self.name = mapped, name

    def check(self) -> None:
        if not self.mapped.intact:
            raise InputError(self.name, "the index file was rewritten in place while in use (another process "
                             "waits to write to or truncate it): stopped before reading it again; run again "
                             "once it is written (write indexes to a new name and rename them over the old, as "
                             "`seqsift index` does)")

    def __reduce__(self):  # a lease means nothing in another process: a copy watches nothing
        return _no_watch, ()


def _no_watch() -> None:
    return None


def _crc(array: np.ndarray) -> int:
    """zlib's CRC-32 of the array's bytes, computed by ISA-L at 4x zlib's speed here: the first
    load of an index file checks all of it (22.7 Mbp: ~7 ms instead of ~28)."""
    return crc32(memoryview(np.ascontiguousarray(array)).cast("B"))


def write_index(path: str | os.PathLike, reference: Reference, arrays: IndexArrays, source: str = "") -> None:
    """Write the index atomically (a temp file renamed on success). The rank blocks, samples and
    k-mer table may be Spills (build.build_arrays' spill_dir): their files are copied in, the
    same bytes."""
    named = {
        "blocks": arrays.blocks, "samples": arrays.samples, "kmer_table": arrays.kmer_table,
        "packed": arrays.packed, "gaps": arrays.gaps, "starts": reference.starts, "lengths": reference.lengths,
    }
    layout, offset = {}, 0
    wide = arrays.samples.dtype == np.uint64
    for name, array in named.items():
        if isinstance(array, Spill):  # written as it was made (build.py): its bytes are copied from its file
            if array.dtype != np.dtype(_dtype(name, wide)):
                raise AssertionError(f"array {name!r} spilled as {array.dtype}, written as {_dtype(name, wide)}")
            crc = array.crc
        else:
            array = named[name] = np.ascontiguousarray(array, dtype=_dtype(name, wide))
            crc = _crc(array)
        layout[name] = {"dtype": _dtype(name, wide), "shape": list(array.shape), "offset": offset, "crc32": crc}
        offset += -(-array.nbytes // ALIGN) * ALIGN
    header = {
        "format": "seqsift FM-index", "created_by": f"seqsift {__version__}", "source": source,
        "alphabet": "$#ACGT", "n": arrays.n, "wide": bool(wide), "sa_sample": arrays.sa_sample,
        "repeat_sample": arrays.repeat_sample, "repeat_window": arrays.repeat_window, "kmer": arrays.kmer,
        "C": [int(c) for c in arrays.C], "names": list(reference.names), "arrays": layout,
    }
    text = json.dumps(header, separators=(",", ":")).encode()
    data_start = -(-(PREAMBLE.size + len(text)) // ALIGN) * ALIGN
    with atomic_output(path) as out:
        out.write(PREAMBLE.pack(MAGIC, VERSION, len(text), crc32(text)))
        out.write(text)
        out.write(b"\0" * (data_start - PREAMBLE.size - len(text)))
        for name, array in named.items():
            if isinstance(array, Spill):
                array.copy_to(out)
            else:
                out.write(memoryview(array).cast("B"))
            out.write(b"\0" * (-array.nbytes % ALIGN))
        if data_start + offset >= DROP_BEHIND:
            _drop_written_pages(out)


def _drop_written_pages(out) -> None:
    """Write the file out and drop its pages from the page cache. Many of the pages a write leaves
    there are small (4 KiB) ones, and a search maps the file with whatever pages are cached: the
    2.3 Gbp index as written (28% of its rank blocks in 2 MiB pages) searched 1 M reads in 2.7-3.4
    s of CPU, the same file read back from disk under the map's MADV_HUGEPAGE in 1.7-2.3 s (_open_index; docs/benchmarks.md, "Genome
    scale"). The first search then reads the file from disk, as its first load's full check
    (checked.py) reads all of it anyway. Where the stream cannot be synced (a pipe), nothing."""
    try:
        out.flush()
        os.fdatasync(out.fileno())
        os.posix_fadvise(out.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    except (OSError, AttributeError, ValueError):  # a pipe or terminal; no posix_fadvise (macOS)
        pass


def load_index(path: str | os.PathLike) -> LoadedIndex:
    """Map an index file; InputError naming the file on anything wrong with it. The checks that
    read every array run once per unchanged file (checked.py)."""
    name = display_name(path)
    check_readable(path)
    data, status, watch = _open_index(path, name)
    size = status.st_size
    head = data[: PREAMBLE.size].tobytes()
    if len(head) < PREAMBLE.size or not head.startswith(MAGIC):
        raise InputError(name, "not a seqsift index (.ssx): wrong magic bytes")
    _, version, header_len, header_crc = PREAMBLE.unpack(head)
    if version != VERSION:
        raise InputError(name, f"index format version {version}; this seqsift reads version {VERSION}: rebuild it with `seqsift index`")
    if header_len > min(size - PREAMBLE.size, MAX_HEADER):
        raise InputError(name, "the index is truncated (its header runs past the end of the file)")
    text = data[PREAMBLE.size : PREAMBLE.size + header_len].tobytes()
    if crc32(text) != header_crc:
        raise InputError(name, "the index header is corrupt (checksum mismatch)")
    try:
        header = json.loads(text)
    except ValueError as exc:
        raise InputError(name, f"the index header is not valid JSON ({exc})") from None
    data_start = -(-(PREAMBLE.size + header_len) // ALIGN) * ALIGN
    full = not checked.seen(status)
    loaded = _check(name, header, _map_arrays(name, header, data, data_start, size, full), full)
    if full:
        checked.remember(status)
    return LoadedIndex(loaded.reference, loaded.arrays, loaded.header, watch)


def _open_index(path: str | os.PathLike, name: str) -> tuple[np.ndarray, os.stat_result, Watch | None]:
    """(the file's bytes, its status, the Watch of its map). Mapped under a read lease where one
    can be had (the file is ours and no one has it open for writing), so that processes and Dask
    workers on one machine share one copy of a large index and a writer waits until the map is
    gone, with huge pages asked for (MappedFile.prefer_huge_pages: past a few GB every rank-block
    read on 4 KiB pages also walked the page table; docs/benchmarks.md, "Genome scale") and the
    whole file read ahead (MappedFile.read_ahead: a cold 2.3 Gbp index took 53 s of scattered
    faults to come in, 3.8 s read ahead); elsewhere
    read into private memory (what a writer does to the file afterwards cannot
    reach a copy), from a descriptor checked to be a regular file and unchanged by the read."""
    mapped = open_mapped(path)
    if mapped is not None:
        mapped.prefer_huge_pages()  # rank blocks read at random: a TLB miss a step on small pages
        mapped.read_ahead()  # and, where the file is not cached, a read from disk a fault without it
        return mapped.held_while_mapped().data, os.fstat(mapped.fd), Watch(mapped, name)
    fd, size = open_regular_fd(path)
    try:
        status = os.fstat(fd)
        try:
            data = np.empty(size, np.uint8)
        except MemoryError:
            raise InputError(name, f"no read lease could be had on the index file, and its {size:,} bytes do not fit "
                             "in memory to be read instead (run as the file's owner)") from None
        done = 0
        while done < size:
            got = read_fd(fd, memoryview(data)[done:])
            if got == 0:
                break
            done += got
        now = os.fstat(fd)
    finally:
        os.close(fd)
    if done < size or (now.st_size, now.st_mtime_ns, now.st_ctime_ns) != (size, status.st_mtime_ns, status.st_ctime_ns):
        raise InputError(name, "the index file changed while it was read: run again once it is written")
    return data, status, None


def _map_arrays(name: str, header: dict, data: np.ndarray, data_start: int, size: int, full: bool) -> dict[str, np.ndarray]:
    """Views of the arrays the header lists, each inside the file; with full, checksummed."""
    if not isinstance(header, dict):
        raise InputError(name, "the index header is not a JSON object")
    layout = header.get("arrays")
    if not isinstance(layout, dict) or set(layout) != set(ARRAYS):
        raise InputError(name, f"the index header must list exactly the arrays {sorted(ARRAYS)}")
    views = {}
    wide = header.get("wide") is True
    for key in ARRAYS:
        dtype = _dtype(key, wide)
        spec = layout[key]
        try:
            shape = tuple(int(s) for s in spec["shape"])
            offset, crc = int(spec["offset"]), int(spec["crc32"])
            ok = spec["dtype"] == dtype and all(s >= 0 for s in shape) and offset >= 0 and offset % ALIGN == 0
        except (KeyError, TypeError, ValueError, OverflowError):  # 1e400 is JSON's infinity
            ok = False
        if not ok:
            raise InputError(name, f"the index header describes array {key!r} wrongly")
        count = int(np.prod(shape, dtype=object))
        start = data_start + offset
        if start + count * np.dtype(dtype).itemsize > size:
            raise InputError(name, f"the index is truncated (array {key!r} runs past the end of the file)")
        array = np.frombuffer(data, dtype, count, start).reshape(shape)
        if full and _crc(array) != crc:
            raise InputError(name, f"array {key!r} of the index is corrupt (checksum mismatch)")
        views[key] = array
    return views


_BLOCK_INVARIANTS = {0: "", 1: "rank counts", 2: "base bitmaps overlap",
                     3: "a row with neither a base nor a mark, or bits past the last row", 4: "mark ranks"}


_BLOCK_INVARIANTS_KERNEL = Kernel("seqsift.fmindex._cpu", "block_invariants", "uint64[:,:] int64 int64[:]", results=2)


def _kmer_intervals_sorted(table: np.ndarray, k: int, C: np.ndarray, n: int) -> bool:
    """The BWT's order, which every sound table has: the k-mers present (lo < hi) hold disjoint
    intervals in the order of their codes, each inside the rows [C[c], C[c+1]) of suffixes
    starting with its first base c. A table claiming every k-mer everywhere fails this."""
    present = np.flatnonzero(table[:, 0] < table[:, 1])
    if k == 0 or present.size == 0:
        return True
    lo, hi = table[present, 0].astype(np.int64), table[present, 1].astype(np.int64)
    first = present >> (2 * (k - 1))
    ends = np.append(C[1:], n)
    return bool(np.all(lo[1:] >= hi[:-1]) and np.all(lo >= C[first]) and np.all(hi <= ends[first]))


def _check(name: str, header: dict, v: dict[str, np.ndarray], full: bool) -> LoadedIndex:
    """The invariants every kernel relies on, checked in bulk (numpy, and one compiled pass over
    the rank blocks), so no row, sample or table entry can point outside its array. Without
    full, only the shapes and the small arrays: the file passed the rest before, unchanged."""
    def need(condition, what: str):
        if not condition:
            raise InputError(name, f"the index is inconsistent: {what}")

    try:
        n, s, k = int(header["n"]), int(header["sa_sample"]), int(header["kmer"])
        repeat_sample, window = int(header.get("repeat_sample", 0)), int(header.get("repeat_window", 0))
        C = np.asarray(header["C"], np.int64)
        names = [str(x) for x in header["names"]]
    except (KeyError, TypeError, ValueError, OverflowError):
        raise InputError(name, "the index header lacks n, sa_sample, kmer, C or names, or holds a value "
                         "that is not a whole number in range") from None
    need(2 <= n <= MAX_TEXT and s >= 1 and 0 <= k <= MAX_KMER and repeat_sample >= 0 and window >= 0,
         "n, sa_sample, repeat_sample, repeat_window or kmer out of range")
    blocks, samples, table = v["blocks"], v["samples"], v["kmer_table"]
    s = min(s, n)  # the bound of every LF walk (locate, stats): no walk of a sound index is longer
    need(n <= NARROW or samples.dtype == np.uint64, "a text past 2^32 symbols needs the wide (64-bit) layout")
    need(blocks.shape == (n // 64 + 1, WORDS), "rank blocks do not match the text length")
    need(C.shape == (4,) and np.all(np.diff(np.concatenate(([1], C, [n]))) >= 0), "C array")
    need(samples.ndim == 1 and table.shape == (4**k, 2), "SA samples or k-mer table shape")
    if full:
        totals = np.zeros(4, np.int64)
        broken, marks = _BLOCK_INVARIANTS_KERNEL(blocks, n % 64, totals)
        need(not broken, _BLOCK_INVARIANTS[broken])
        need(np.array_equal(np.diff(np.concatenate((C, [n]))), totals), "C against the rank counts")
        need(samples.shape == (marks,) and (samples.size == 0 or int(samples.max()) < n), "SA samples")
        need(np.all(table[:, 0] <= table[:, 1]) and (table.size == 0 or int(table[:, 1].max()) <= n), "k-mer table")
        need(_kmer_intervals_sorted(table, k, C, n), "k-mer intervals overlap, are out of order or lie outside "
             "their first base's rows")
    need(v["packed"].shape == (-(-n // 4),), "packed reference length")
    starts, lengths, gaps = v["starts"], v["lengths"], v["gaps"]
    need(len(names) >= 1 and starts.shape == lengths.shape == (len(names),), "record table")
    need(np.all(lengths >= 0) and starts[0] == 0 and np.array_equal(starts[1:], (starts + lengths + 1)[:-1])
         and starts[-1] + lengths[-1] + 1 == n, "record offsets")
    need(gaps.ndim == 2 and gaps.shape[1] == 2 and np.all(gaps[:, 0] < gaps[:, 1]) and np.all(gaps[1:, 0] > gaps[:-1, 1])
         and (gaps.size == 0 or (gaps[0, 0] >= 0 and gaps[-1, 1] == n)), "gap runs")
    reference = Reference(text=None, names=names, starts=starts, lengths=lengths)
    arrays = IndexArrays(blocks=blocks, C=C, samples=samples, kmer_table=table, packed=v["packed"], gaps=gaps,
                         n=n, sa_sample=s, repeat_sample=repeat_sample, repeat_window=window, kmer=k)
    return LoadedIndex(reference=reference, arrays=arrays, header=header)
