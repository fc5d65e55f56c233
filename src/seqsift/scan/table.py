"""The filters' tables, built from each piece's anchor (its longest run of exact bytes).

KeyTagTable is the table of GPU Gems 3, ch. 35 (sections 3-4): a 2-byte key indexes 65,536 buckets, each
entry holding the 4-byte tag of the bytes before the key and the piece it stands for. The chapter
keeps one entry per key and overflows; here a bucket holds any number (CSR layout) and each
piece's key is chosen within its run to keep buckets small. Runs of 2-5 bytes fit the same
table with the missing tag bytes masked off (the CPU's short table).

StrideFilter is the CPU's faster prefilter: it probes only every S-th position with the 8 bytes
found there. A piece whose run holds at least 7+S bytes is indexed at S consecutive 8-byte
windows, so one of them lines up with a probed position wherever the run occurs. A filter of
hashed windows (a cache-resident blocked Bloom filter) rejects almost every position before the
hash table (open addressing: window and owner in one 16-byte slot, one cache line a probe) is read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.scan import kernels
from seqsift.scan.kernels import EMPTY
from seqsift.scan.program import Program

KEYS = 1 << 16
TAG = 4
WINDOW = 8


SAMPLE_BYTES = 4 << 20


def pair_log_probability(sample: np.ndarray | None) -> np.ndarray:
    """log P(byte pair), indexed a | b << 8: half a prior, half a sample of the data to be
    scanned. The prior puts half its mass on a byte followed by itself, since runs (0x00, 0xff,
    0xcc and 0x90 padding, spaces) are what binaries and text repeat most; a sample, being one
    buffer, cannot speak for every file. The filters index each signature where this model
    finds it rarest, so a signature holding a run or a sequence common in the data is not
    probed there."""
    prior = np.full(KEYS, 0.5 / KEYS)
    prior[np.arange(256) * 257] += 0.5 / 256
    p = prior
    if sample is not None and sample.size > 1:
        counts = np.zeros(KEYS, np.int64)
        kernels.count_pairs(np.ascontiguousarray(sample[:SAMPLE_BYTES]), counts)
        p = 0.5 * prior + 0.5 * counts / counts.sum()
    return np.log(p)


@dataclass
class TableStats:
    entries: int
    keys_used: int
    largest_bucket: int
    one_per_key_lost: int  # signatures a one-entry-per-key table could not hold

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


def build_key_tag_table(program: Program, pieces: np.ndarray, bloom_bits: int = 0,
                        pair_logp: np.ndarray | None = None) -> KeyTagTable:
    """Entries for the given pieces (each anchor at least 2 bytes); with bloom_bits, a Bloom filter
    of hashed tag+key windows in front, about bloom_bits bits per entry (every anchor then needs
    6 bytes)."""
    flat, offsets = _flatten([program.anchors[p] for p in pieces.tolist()])
    if np.any(np.diff(offsets) < 2):
        raise ValueError("the table needs anchors of at least 2 bytes")
    n = offsets.size - 1
    keys, tags, masks, rels = np.empty(n, np.int64), np.empty(n, np.uint32), np.empty(n, np.uint32), np.empty(n, np.int32)
    kernels.place_keys(flat, offsets, pair_log_probability(None) if pair_logp is None else pair_logp, keys, tags, masks,
                       rels)
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


def _bloom(windows: np.ndarray, word_bits: int) -> np.ndarray:
    """The blocked Bloom filter _cpu.bloom_test reads: 2**word_bits words of 64 bits."""
    bloom = np.zeros(1 << word_bits, np.uint64)
    h = _hashes(windows)
    word = (h >> np.uint64(64 - word_bits)).astype(np.int64)
    for shift in (26, 32, 38):
        np.bitwise_or.at(bloom, word, np.uint64(1) << ((h >> np.uint64(shift)) & np.uint64(63)))
    return bloom


def bloom_words(entries: int, bits_per_entry: int, most: int = 21) -> int:
    """log2 of the Bloom filter's word count: about bits_per_entry bits per entry, from 1 KiB up
    to 2**most words."""
    return int(np.clip(np.ceil(np.log2(max(entries, 1) * bits_per_entry / 64)), 7, most))


# The stride filter's Bloom filter: 24 bits a window, at most 2 MiB. Measured on 384 MB of binaries
# (no hits): 30,000 signatures ran 1.44 GB/s at 16 bits (512 KiB), 1.75 at 24-32 (1 MiB);
# 120,000 ran 0.66 at 2 MiB, 0.49 at 1 MiB and 0.46 at 4 MiB: past the caches, probes wait.
STRIDE_BLOOM_BITS, STRIDE_BLOOM_MOST = 24, 18


@dataclass
class StrideFilter:
    stride: int
    bloom: np.ndarray  # uint64 blocked Bloom filter
    bloom_shift: int
    slot_shift: int
    slots: np.ndarray  # uint64 [2**k, 2]: (distinct 8-byte window, its index u)
    owner_start: np.ndarray  # int64: window u is owned by owners[owner_start[u]:owner_start[u+1]]
    owners: np.ndarray  # uint64: piece << 32 | window start minus anchor start

    def __len__(self) -> int:
        return int(self.owners.size)

    @property
    def most_owners(self) -> int:
        """The most pieces sharing one window: the candidates one probe can raise."""
        return int(np.diff(self.owner_start).max(initial=0))

    @property
    def arrays(self) -> tuple:
        return self.stride, self.bloom, self.bloom_shift, self.slot_shift, self.slots, self.owner_start, self.owners


def _hashes(windows: np.ndarray) -> np.ndarray:
    """The kernels' own hash of each 8-byte window."""
    out = np.empty(windows.size, np.uint64)
    kernels.hash_windows(np.ascontiguousarray(windows, np.uint64), out)
    return out


def stride_min_anchor(stride: int) -> int:
    """The shortest anchor a StrideFilter of this stride can index."""
    return WINDOW + stride - 1


def build_stride_filter(program: Program, pieces: np.ndarray, stride: int, bits_per_window: int = STRIDE_BLOOM_BITS,
                        pair_logp: np.ndarray | None = None) -> StrideFilter:
    """S windows per piece; a Bloom filter of about bits_per_window bits per window in front of
    hash buckets holding about one window each."""
    flat, offsets = _flatten([program.anchors[p] for p in pieces.tolist()])
    if np.any(np.diff(offsets) < stride_min_anchor(stride)):
        raise ValueError(f"stride {stride} needs anchors of at least {stride_min_anchor(stride)} bytes")
    first = np.empty(offsets.size - 1, np.int64)
    kernels.stride_offsets(flat, offsets, stride, pair_log_probability(None) if pair_logp is None else pair_logp, first)
    at = first[:, None] + np.arange(stride)  # window starts: S per anchor
    v = np.ascontiguousarray(flat[at[..., None] + np.arange(WINDOW)]).view("<u8").reshape(-1).astype(np.uint64)
    owner = np.repeat(np.asarray(pieces, np.int32), stride)
    rels = (at - offsets[:-1, None]).astype(np.int32).reshape(-1)
    metas = (owner.astype(np.uint64) << np.uint64(32)) | rels.astype(np.uint32).astype(np.uint64)
    distinct, which = np.unique(v, return_inverse=True)  # signatures sharing a window share its slot
    order = np.argsort(which, kind="stable")
    owner_start = np.zeros(distinct.size + 1, np.int64)
    np.cumsum(np.bincount(which, minlength=distinct.size), out=owner_start[1:])
    n = max(distinct.size, 1)
    words = bloom_words(n, bits_per_window, STRIDE_BLOOM_MOST)
    slot_bits = int(np.clip(np.ceil(np.log2(2 * n)), 10, 26))  # load factor at most 1/2
    slots = np.full((1 << slot_bits, 2), EMPTY, np.uint64)
    kernels.fill_slots(_hashes(distinct), distinct, 64 - slot_bits, slots)
    return StrideFilter(stride, _bloom(distinct, words), 64 - words, 64 - slot_bits, slots, owner_start, metas[order])
