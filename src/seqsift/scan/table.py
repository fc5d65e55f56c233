"""The filters' tables, built from each piece's anchor (its longest run of exact bytes).

KeyTagTable is the seed's table (sections 3-4): a 2-byte key indexes 65,536 buckets, each
entry holding the 4-byte tag of the bytes before the key and the piece it stands for. The seed
keeps one entry per key and overflows; here a bucket holds any number (CSR layout) and each
piece's key is chosen within its run to keep buckets small. Runs of 2-5 bytes fit the same
table with the missing tag bytes masked off (the CPU's short table).

StrideFilter is the CPU's faster prefilter: it probes only every S-th position with the 8 bytes
found there. A piece whose run holds at least 7+S bytes is indexed at S consecutive 8-byte
windows, so one of them lines up with a probed position wherever the run occurs. A bitmap of
hashed windows (cache-resident) rejects almost every position before the hash buckets are read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.scan.program import Program

KEYS = 1 << 16
TAG = 4
WINDOW = 8
HASH = np.uint64(0x9E3779B97F4A7C15)


@dataclass
class TableStats:
    entries: int
    keys_used: int
    largest_bucket: int
    one_per_key_lost: int  # signatures the seed's one-entry-per-key table could not hold

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class KeyTagTable:
    starts: np.ndarray  # int64 [65537]: bucket k is entries starts[k]:starts[k+1]
    tags: np.ndarray  # uint32: the 4 bytes before the key, little-endian
    masks: np.ndarray  # uint32: which tag bits count (all for a full 4-byte tag)
    piece: np.ndarray  # int32
    rel: np.ndarray  # int32: tag start minus anchor start (negative when tag bytes are masked off)
    bitmap: np.ndarray  # uint64 bitmap of hashed 6-byte tag+key windows (one word when unused)
    bitmap_shift: int  # 0: no bitmap
    keys: np.ndarray  # uint16 per entry, in bucket order

    @property
    def stats(self) -> TableStats:
        sizes = np.diff(self.starts)
        used = int(np.count_nonzero(sizes))
        return TableStats(int(self.piece.size), used, int(sizes.max()) if sizes.size else 0, int(self.piece.size) - used)

    def __len__(self) -> int:
        return int(self.piece.size)


def build_key_tag_table(program: Program, pieces: np.ndarray, bitmap_bits: int = 0) -> KeyTagTable:
    """Entries for the given pieces (each anchor at least 2 bytes); with bitmap_bits, a bitmap of
    2**bitmap_bits hashed tag+key windows in front (every anchor then needs 6 bytes)."""
    load = np.zeros(KEYS, np.int64)
    keys, tags, masks, rels = [], [], [], []
    for p in pieces.tolist():
        run = program.anchors[p]
        r = len(run)
        if r >= TAG + 2:
            t = min(range(r - TAG - 1), key=lambda t: (load[_key(run, t + TAG)], _common(run, t + TAG)))
            tag, mask = int.from_bytes(run[t : t + TAG], "little"), 0xFFFFFFFF
        elif r >= 2:
            t = r - TAG - 2
            missing = -t
            tag = int.from_bytes(bytes(missing) + run[: r - 2], "little")
            mask = (0xFFFFFFFF << (8 * missing)) & 0xFFFFFFFF
        else:
            raise ValueError(f"piece {p} has an anchor of {r} bytes; the table needs at least 2")
        key = _key(run, t + TAG)
        load[key] += 1
        keys.append(key), tags.append(tag), masks.append(mask), rels.append(t)
    keys_a = np.asarray(keys, np.int64)
    order = np.argsort(keys_a, kind="stable")
    starts = np.zeros(KEYS + 1, np.int64)
    np.cumsum(np.bincount(keys_a, minlength=KEYS), out=starts[1:])
    table = KeyTagTable(
        starts, np.asarray(tags, np.uint32)[order], np.asarray(masks, np.uint32)[order],
        np.asarray(pieces, np.int32)[order], np.asarray(rels, np.int32)[order],
        np.zeros(1, np.uint64), 0, keys_a[order].astype(np.uint16),
    )
    if bitmap_bits:
        if np.any(table.masks != 0xFFFFFFFF):
            raise ValueError("a bitmap needs full 4-byte tags")
        window = (table.keys.astype(np.uint64) << np.uint64(32)) | table.tags.astype(np.uint64)
        table.bitmap, table.bitmap_shift = _bitmap(window << np.uint64(16), bitmap_bits), 64 - bitmap_bits
    return table


def _key(run: bytes, at: int) -> int:
    return run[at] | (run[at + 1] << 8)


def _common(run: bytes, at: int) -> int:
    """Keys of zero or 0xff bytes are the commonest in binaries: prefer others on a tie."""
    return sum(b in (0, 0xFF) for b in run[at : at + 2])


def _bitmap(windows: np.ndarray, bits: int) -> np.ndarray:
    bitmap = np.zeros(max((1 << bits) // 64, 1), np.uint64)
    with np.errstate(over="ignore"):
        h = (windows * HASH) >> np.uint64(64 - bits)
    np.bitwise_or.at(bitmap, (h >> np.uint64(6)).astype(np.int64), np.uint64(1) << (h & np.uint64(63)))
    return bitmap


@dataclass
class StrideFilter:
    stride: int
    bitmap: np.ndarray  # uint64
    bitmap_shift: int
    bucket_shift: int
    starts: np.ndarray  # int64 [2**bucket_bits + 1]
    values: np.ndarray  # uint64: the 8-byte window
    piece: np.ndarray  # int32
    rel: np.ndarray  # int32: window start minus anchor start

    def __len__(self) -> int:
        return int(self.piece.size)


def stride_min_anchor(stride: int) -> int:
    """The shortest anchor a StrideFilter of this stride can index."""
    return WINDOW + stride - 1


def build_stride_filter(program: Program, pieces: np.ndarray, stride: int, bits_per_window: int = 16) -> StrideFilter:
    values, owner, rels = [], [], []
    for p in pieces.tolist():
        run = program.anchors[p]
        if len(run) < stride_min_anchor(stride):
            raise ValueError(f"piece {p} has an anchor of {len(run)} bytes; stride {stride} needs {stride_min_anchor(stride)}")
        for j in range(stride):
            values.append(int.from_bytes(run[j : j + WINDOW], "little"))
            owner.append(p)
            rels.append(j)
    v = np.asarray(values, np.uint64)
    n = max(v.size, 1)
    bitmap_bits = int(np.clip(np.ceil(np.log2(n * bits_per_window)), 16, 26))
    bucket_bits = int(np.clip(np.ceil(np.log2(n)), 10, 24))
    with np.errstate(over="ignore"):
        bucket = ((v * HASH) >> np.uint64(64 - bucket_bits)).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    starts = np.zeros((1 << bucket_bits) + 1, np.int64)
    np.cumsum(np.bincount(bucket, minlength=1 << bucket_bits), out=starts[1:])
    return StrideFilter(
        stride, _bitmap(v, bitmap_bits), 64 - bitmap_bits, 64 - bucket_bits, starts,
        v[order], np.asarray(owner, np.int32)[order], np.asarray(rels, np.int32)[order],
    )
