"""Everything a kernel needs to know about one pattern, computed once on the host."""

from __future__ import annotations

from array import array

# The CPU filter tests 2, 4 or 6 probe bytes a position: the fewest whose chance of all matching
# at a random position, estimated from the sample, is at most PASS_RATE. A block of 32 positions
# with a survivor costs a mispredicted branch, so the rate is kept well below 1/32; each probe
# more costs a load and a compare per block. One thread, 2026-12-01, counting over data in memory:
# 515 MiB of DNA took 0.061 s with four probes (a survivor every 256 positions), 0.040-0.050 s
# with six; 1 GB of binaries (a random 20-byte pattern, bytes of rate ~1/1000) 0.054-0.062 s with
# four, 0.046-0.059 s with two.
PROBE_COUNTS = (2, 4, 6)
PASS_RATE = 1 / 2048
# The bytes rated: the start of the data, each pattern byte counted by bytes.count (~1 ms a MiB
# and byte value; numpy's bincount would do a MiB in one pass, but importing numpy costs a
# command ~0.06-0.1 s, docs/benchmarks.md "Start-up").
SAMPLE_BYTES = 64 << 10
_COMPLEMENT = bytes.maketrans(b"ACGTUNRYKMSWBDHVacgtunrykmswbdhv", b"TGCAANYRMKSWVHDBtgcaanyrmkswvhdb")


class SearchPlan:
    """pattern: the bytes sought; fail: the KMP failure table (fail[q] = length of the longest
    proper border of pattern[:q+1]); probes: positions of the pattern bytes the CPU filter tests
    (2, 4 or 6 of them). Plain buffers (bytes, array.array of int32 and int64), so that a search
    on the CPU imports no numpy; a numpy user views them with np.frombuffer. A plain class, not a
    NamedTuple: typing costs every command ~6 ms to import (docs/benchmarks.md, "Start-up")."""

    __slots__ = ("pattern", "fail", "probes")

    def __init__(self, pattern: bytes, fail: array, probes: array):
        self.pattern, self.fail, self.probes = pattern, fail, probes

    @property
    def length(self) -> int:
        return len(self.pattern)


def failure_table(pattern: bytes) -> array:
    m = len(pattern)
    fail = array("i", bytes(4 * max(m, 1)))
    k = 0
    for q in range(1, m):
        while k > 0 and pattern[k] != pattern[q]:
            k = fail[k - 1]
        if pattern[k] == pattern[q]:
            k += 1
        fail[q] = k
    return fail


def byte_rates(sample, values=range(256)) -> dict[int, float]:
    """The share of each byte value in `values` in the sample (any buffer of bytes; its first
    SAMPLE_BYTES), counted one more than seen (so none is 0); all 1/256 without a sample."""
    data = b"" if sample is None else bytes(memoryview(sample).cast("B")[:SAMPLE_BYTES])
    if not data:
        return {v: 1 / 256 for v in values}
    return {v: (data.count(v) + 1.0) / (len(data) + 256) for v in values}


def spread_rarest(pattern: bytes, rates: dict[int, float], count: int) -> array:
    """One position in each of `count` equal parts of the pattern, the rarest byte of its part:
    spread out (neighbouring bytes of DNA or text go together) and rare. A pattern shorter than
    count repeats positions."""
    m = len(pattern)
    edges = [int(k * (m / count)) for k in range(count)] + [m]  # as np.linspace(0, m, count + 1) cut to integers
    probes: list[int] = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi <= lo:
            probes.append(probes[-1] if probes else 0)
            continue
        probes.append(min(range(lo, hi), key=lambda j: rates[pattern[j]]))  # the first of the rarest
    return array("q", probes)


def choose_probes(pattern: bytes, sample=None) -> array:
    """The positions the CPU filter tests: 2, 4 or 6 (PROBE_COUNTS), the fewest whose estimated
    chance of all matching at once is at most PASS_RATE, as rated in `sample` (the start of the
    data); six where none is, fewer where the pattern has fewer bytes to test."""
    rates = byte_rates(sample, set(pattern))
    for count in PROBE_COUNTS:
        probes = spread_rarest(pattern, rates, count)
        chance = 1.0
        for position in sorted(set(probes)):
            chance *= rates[pattern[position]]
        if chance <= PASS_RATE or count >= len(pattern):
            break
    return probes


def make_plan(pattern: bytes, sample=None) -> SearchPlan:
    if not pattern:
        raise ValueError("empty pattern")
    pattern = bytes(pattern)
    return SearchPlan(pattern=pattern, fail=failure_table(pattern), probes=choose_probes(pattern, sample))


def reverse_complement(seq: bytes) -> bytes:
    """IUPAC-aware reverse complement; other letters map to themselves."""
    return seq.translate(_COMPLEMENT)[::-1]
