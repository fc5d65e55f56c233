"""Everything a kernel needs to know about one pattern, computed once on the host."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The CPU filter tests 2, 4 or 6 probe bytes a position: the fewest whose chance of all matching
# at a random position, estimated from the sample, is at most PASS_RATE. A block of 32 positions
# with a survivor costs a mispredicted branch, so the rate is kept well below 1/32; each probe
# more costs a load and a compare per block. One thread, 2026-12-01, counting over data in memory:
# 515 MiB of DNA took 0.061 s with four probes (a survivor every 256 positions), 0.040-0.050 s
# with six; 1 GB of binaries (a random 20-byte pattern, bytes of rate ~1/1000) 0.054-0.062 s with
# four, 0.046-0.059 s with two.
PROBE_COUNTS = (2, 4, 6)
PASS_RATE = 1 / 2048
_COMPLEMENT = bytes.maketrans(b"ACGTUNRYKMSWBDHVacgtunrykmswbdhv", b"TGCAANYRMKSWVHDBtgcaanyrmkswvhdb")


@dataclass(frozen=True)
class SearchPlan:
    """pattern: the bytes sought; fail: the KMP failure table (fail[q] = length of the longest
    proper border of pattern[:q+1]); probes: positions of the pattern bytes the CPU filter tests
    (2, 4 or 6 of them)."""

    pattern: np.ndarray
    fail: np.ndarray
    probes: np.ndarray

    @property
    def length(self) -> int:
        return int(self.pattern.size)


def failure_table(pattern: bytes) -> np.ndarray:
    m = len(pattern)
    fail = np.zeros(max(m, 1), np.int32)
    k = 0
    for q in range(1, m):
        while k > 0 and pattern[k] != pattern[q]:
            k = int(fail[k - 1])
        if pattern[k] == pattern[q]:
            k += 1
        fail[q] = k
    return fail


def byte_rates(sample: np.ndarray | None) -> np.ndarray:
    """Each byte value's share of the sample, counted one more than seen (so none is 0); all
    1/256 without a sample."""
    if sample is None or sample.size == 0:
        return np.full(256, 1 / 256)
    return (np.bincount(sample, minlength=256) + 1.0) / (sample.size + 256)


def spread_rarest(pattern: bytes, rates: np.ndarray, count: int) -> np.ndarray:
    """One position in each of `count` equal parts of the pattern, the rarest byte of its part:
    spread out (neighbouring bytes of DNA or text go together) and rare. A pattern shorter than
    count repeats positions."""
    m = len(pattern)
    pat = np.frombuffer(pattern, np.uint8)
    edges = np.linspace(0, m, count + 1).astype(np.int64)
    probes = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi <= lo:
            probes.append(probes[-1] if probes else 0)
            continue
        probes.append(int(lo + np.argmin(rates[pat[lo:hi]])))
    return np.asarray(probes, np.int64)


def choose_probes(pattern: bytes, sample: np.ndarray | None) -> np.ndarray:
    """The positions the CPU filter tests: 2, 4 or 6 (PROBE_COUNTS), the fewest whose estimated
    chance of all matching at once is at most PASS_RATE, as rated in `sample` (the start of the
    data); six where none is, fewer where the pattern has fewer bytes to test."""
    rates = byte_rates(sample)
    pat = np.frombuffer(pattern, np.uint8)
    for count in PROBE_COUNTS:
        probes = spread_rarest(pattern, rates, count)
        distinct = sorted(set(probes.tolist()))  # not np.unique: it imports numpy.ma, ~20 ms a process
        if np.prod(rates[pat[distinct]]) <= PASS_RATE or count >= len(pattern):
            break
    return probes


def make_plan(pattern: bytes, sample: np.ndarray | None = None) -> SearchPlan:
    if not pattern:
        raise ValueError("empty pattern")
    return SearchPlan(
        pattern=np.frombuffer(bytes(pattern), np.uint8).copy(),
        fail=failure_table(pattern),
        probes=choose_probes(pattern, sample),
    )


def reverse_complement(seq: bytes) -> bytes:
    """IUPAC-aware reverse complement; other letters map to themselves."""
    return seq.translate(_COMPLEMENT)[::-1]
