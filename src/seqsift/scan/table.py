"""The filters' tables, built from each piece's anchor (its longest run of exact bytes).

KeyTagTable is the seed's table (sections 3-4): a 2-byte key indexes 65,536 buckets, each
entry holding the 4-byte tag of the bytes before the key and the piece it stands for. The seed
keeps one entry per key and overflows; here a bucket holds any number (CSR layout) and each
piece's key is chosen within its run to keep buckets small. Runs of 2-5 bytes fit the same
table with the missing tag bytes masked off (the CPU's short table).

StrideFilter is the CPU's faster prefilter: it probes only every S-th position with the 8 bytes
found there. A piece whose run holds at least 7+S bytes is indexed at S consecutive 8-byte
windows, so one of them lines up with a probed position wherever the run occurs. A filter of
hashed windows (a cache-resident blocked Bloom filter) rejects almost every position before the hash buckets are read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from seqsift.scan._cpu import hash_windows
from seqsift.scan.program import Program

KEYS = 1 << 16
TAG = 4
WINDOW = 8


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
    bloom: np.ndarray  # uint64 blocked Bloom filter of hashed 6-byte tag+key windows (one word when unused)
    bloom_shift: int  # 0: no Bloom filter
    keys: np.ndarray  # uint16 per entry, in bucket order

    @property
    def stats(self) -> TableStats:
        sizes = np.diff(self.starts)
        used = int(np.count_nonzero(sizes))
        return TableStats(int(self.piece.size), used, int(sizes.max()) if sizes.size else 0, int(self.piece.size) - used)

    def __len__(self) -> int:
        return int(self.piece.size)


def build_key_tag_table(program: Program, pieces: np.ndarray, bloom_bits: int = 0) -> KeyTagTable:
    """Entries for the given pieces (each anchor at least 2 bytes); with bloom_bits, a Bloom filter
    of hashed tag+key windows in front, about bloom_bits bits per entry (every anchor then needs
    6 bytes)."""
    flat, offsets = _flatten([program.anchors[p] for p in pieces.tolist()])
    if np.any(np.diff(offsets) < 2):
        raise ValueError("the table needs anchors of at least 2 bytes")
    keys, tags, masks, rels = _place_keys(flat, offsets)
    keys_a = keys
    order = np.argsort(keys_a, kind="stable")
    starts = np.zeros(KEYS + 1, np.int64)
    np.cumsum(np.bincount(keys_a, minlength=KEYS), out=starts[1:])
    table = KeyTagTable(
        starts, tags[order], masks[order], np.asarray(pieces, np.int32)[order], rels[order],
        np.zeros(1, np.uint64), 0, keys_a[order].astype(np.uint16),
    )
    if bloom_bits:
        if np.any(table.masks != 0xFFFFFFFF):
            raise ValueError("a Bloom filter needs full 4-byte tags")
        window = (table.keys.astype(np.uint64) << np.uint64(32)) | table.tags.astype(np.uint64)
        words = bloom_words(len(table), bloom_bits)
        table.bloom, table.bloom_shift = _bloom(window << np.uint64(16), words), 64 - words
    return table


def _flatten(runs: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The runs back to back, and where each starts (plus the end)."""
    offsets = np.zeros(len(runs) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, runs), np.int64, len(runs)), out=offsets[1:])
    return np.frombuffer(b"".join(runs), np.uint8), offsets


@njit(cache=True)
def _place_keys(flat, offsets):
    """Per anchor flat[offsets[k]:offsets[k+1]]: its key, tag, tag mask and tag offset in the run.
    A 6-byte or longer run takes the key position whose bucket is least full so far, preferring
    keys without 0x00/0xff bytes (the commonest in binaries) on a tie; a shorter run takes its last
    two bytes as key and masks off the tag bytes it lacks."""
    n = offsets.size - 1
    load = np.zeros(KEYS, np.int64)
    keys = np.empty(n, np.int64)
    tags = np.empty(n, np.uint32)
    masks = np.empty(n, np.uint32)
    rels = np.empty(n, np.int32)
    for k in range(n):
        lo = offsets[k]
        r = offsets[k + 1] - lo
        if r >= TAG + 2:
            best, best_cost = 0, np.int64(1) << 62
            for t in range(r - TAG - 1):
                b0, b1 = flat[lo + t + TAG], flat[lo + t + TAG + 1]
                key = np.int64(b0) | (np.int64(b1) << 8)
                cost = load[key] * 4 + (b0 == 0 or b0 == 255) + (b1 == 0 or b1 == 255)
                if cost < best_cost:
                    best, best_cost = t, cost
            t = best
        else:
            t = r - TAG - 2
        tag = np.uint32(0)
        mask = np.uint32(0)
        for j in range(TAG):
            if t + j >= 0:
                tag |= np.uint32(flat[lo + t + j]) << np.uint32(8 * j)
                mask |= np.uint32(0xFF) << np.uint32(8 * j)
        key = np.int64(flat[lo + t + TAG]) | (np.int64(flat[lo + t + TAG + 1]) << 8)
        load[key] += 1
        keys[k], tags[k], masks[k], rels[k] = key, tag, mask, t
    return keys, tags, masks, rels


def _bloom(windows: np.ndarray, word_bits: int) -> np.ndarray:
    """The blocked Bloom filter _cpu.bloom_test reads: 2**word_bits words of 64 bits."""
    bloom = np.zeros(1 << word_bits, np.uint64)
    h = hash_windows(windows)
    word = (h >> np.uint64(64 - word_bits)).astype(np.int64)
    for shift in (26, 32, 38):
        np.bitwise_or.at(bloom, word, np.uint64(1) << ((h >> np.uint64(shift)) & np.uint64(63)))
    return bloom


def bloom_words(entries: int, bits_per_entry: int) -> int:
    """log2 of the Bloom filter's word count: about bits_per_entry bits per entry, 1 KiB to 16 MiB."""
    return int(np.clip(np.ceil(np.log2(max(entries, 1) * bits_per_entry / 64)), 7, 21))


@dataclass
class StrideFilter:
    stride: int
    bloom: np.ndarray  # uint64 blocked Bloom filter
    bloom_shift: int
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
    """S windows per piece; a Bloom filter of about bits_per_window bits per window in front of
    hash buckets holding about one window each."""
    flat, offsets = _flatten([program.anchors[p] for p in pieces.tolist()])
    if np.any(np.diff(offsets) < stride_min_anchor(stride)):
        raise ValueError(f"stride {stride} needs anchors of at least {stride_min_anchor(stride)} bytes")
    at = offsets[:-1, None] + np.arange(stride)  # window starts: S per anchor
    v = np.ascontiguousarray(flat[at[..., None] + np.arange(WINDOW)]).view("<u8").reshape(-1).astype(np.uint64)
    owner = np.repeat(np.asarray(pieces, np.int32), stride)
    rels = np.tile(np.arange(stride, dtype=np.int32), len(pieces))
    n = max(v.size, 1)
    words = bloom_words(n, bits_per_window)
    bucket_bits = int(np.clip(np.ceil(np.log2(n)), 10, 24))
    bucket = (hash_windows(v) >> np.uint64(64 - bucket_bits)).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    starts = np.zeros((1 << bucket_bits) + 1, np.int64)
    np.cumsum(np.bincount(bucket, minlength=1 << bucket_bits), out=starts[1:])
    return StrideFilter(
        stride, _bloom(v, words), 64 - words, 64 - bucket_bits, starts,
        v[order], owner[order], rels[order],
    )
