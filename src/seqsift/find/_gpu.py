"""GPU kernel and streamed pipeline (numba-cuda), as sections 3.1-3.2 of the data-parallel KMP paper describe.

Work items: blocks x threads, the block count a multiple of the device's
multiprocessors. Each work item takes an equal share of the chunk's candidate
start positions plus P-1 bytes of overlap and runs the KMP automaton, with the
pattern and failure table staged in shared memory. Counts are summed per block
and added with one atomic per block; positions are compacted per block (a
shared-memory prefix sum, one atomic to reserve the block's slice of the
output), and only work items that found something scan their partition again
to write. The host streams chunks through `streams` CUDA streams with pinned
host buffers, so the copy in of chunk k+1, the kernel on chunk k and the copy
back of chunk k-1 overlap, and inputs larger than GPU memory work.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Iterator

import numpy as np
from numba import cuda, int32, int64, uint8

from seqsift.backend import GpuConfig
from seqsift.errors import BackendUnavailable
from seqsift.find.kmp import kmp_step
from seqsift.find.plan import SearchPlan

MAX_PATTERN = 2048
MAX_THREADS_PER_BLOCK = 1024

_kmp_step = cuda.jit(device=True)(kmp_step)


@cuda.jit
def _kmp_kernel(text, n_text, pattern, fail, m, part, out, counter, store):
    pat_s = cuda.shared.array(MAX_PATTERN, uint8)
    fail_s = cuda.shared.array(MAX_PATTERN, int32)
    prefix = cuda.shared.array(MAX_THREADS_PER_BLOCK, int64)
    block_base = cuda.shared.array(1, int64)
    tid = cuda.threadIdx.x
    width = cuda.blockDim.x
    for k in range(tid, m, width):
        pat_s[k] = pattern[k]
        fail_s[k] = fail[k]
    cuda.syncthreads()

    lo = cuda.grid(1) * part
    hi = min(lo + part, n_text - m + 1)
    end = hi + m - 1 if lo < hi else lo
    found = 0
    q = 0
    for j in range(lo, end):
        q = _kmp_step(q, text[j], pat_s, fail_s)
        if q == m:
            found += 1
            q = fail_s[m - 1]

    prefix[tid] = found  # inclusive scan over the block (Hillis-Steele)
    cuda.syncthreads()
    step = 1
    while step < width:
        add = prefix[tid - step] if tid >= step else 0
        cuda.syncthreads()
        prefix[tid] += add
        cuda.syncthreads()
        step *= 2
    if tid == 0:
        total = prefix[width - 1]
        block_base[0] = cuda.atomic.add(counter, 0, total) if total > 0 else 0
    cuda.syncthreads()

    if store and found > 0:
        k = block_base[0] + prefix[tid] - found
        q = 0
        for j in range(lo, end):
            q = _kmp_step(q, text[j], pat_s, fail_s)
            if q == m:
                if k < out.size:
                    out[k] = j - m + 1
                k += 1
                q = fail_s[m - 1]


class _Slot:
    """One stream with its pinned host buffer and device buffers."""

    def __init__(self, buffer_size: int, capacity: int):
        self.stream = cuda.stream()
        self.host = cuda.pinned_array(buffer_size, np.uint8)
        self.device = cuda.device_array(buffer_size, np.uint8)
        self.counter = cuda.device_array(1, np.int64)
        self.count_host = cuda.pinned_array(1, np.int64)
        self.out = cuda.device_array(capacity, np.int64)
        self.job: tuple[int, int] | None = None  # (stream offset, valid bytes) in flight


class GpuSearcher:
    """Streams chunks through the GPU; yields (offset, count, sorted positions or None) in order."""

    def __init__(self, plan: SearchPlan, config: GpuConfig = GpuConfig()):
        if plan.length > MAX_PATTERN:
            raise BackendUnavailable(
                f"the cuda backend takes patterns up to {MAX_PATTERN} bytes (this one has {plan.length}); use --backend cpu"
            )
        if not 1 <= config.threads_per_block <= MAX_THREADS_PER_BLOCK:
            raise ValueError(f"threads_per_block must be 1..{MAX_THREADS_PER_BLOCK}")
        self.plan = plan
        self.config = config
        self.pattern = cuda.to_device(np.frombuffer(plan.pattern, np.uint8))
        self.fail = cuda.to_device(np.frombuffer(plan.fail, np.int32))
        sms = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", None) or config.fallback_sms
        self.blocks = int(sms) * config.blocks_per_sm
        self.work_items = self.blocks * config.threads_per_block
        self._slots: list[_Slot] | None = None
        self._zero = cuda.pinned_array(1, np.int64)
        self._zero[0] = 0

    def run(
        self, fill: Callable[[np.ndarray], tuple[int, int] | None], buffer_size: int, store: bool
    ) -> Iterator[tuple[int, int, np.ndarray | None]]:
        slots = self._slots_for(buffer_size)
        in_flight: deque[_Slot] = deque()
        k = 0
        while True:
            slot = slots[k % len(slots)]
            if slot.job is not None:
                yield self._finish(in_flight.popleft(), store)
            got = fill(slot.host)
            if got is None:
                break
            slot.job = got
            self._launch(slot, store)
            in_flight.append(slot)
            k += 1
        while in_flight:
            yield self._finish(in_flight.popleft(), store)

    def _slots_for(self, buffer_size: int) -> list[_Slot]:
        """Pinned and device buffers, allocated once per buffer size and reused run after run
        (allocating pinned memory costs milliseconds). Work left by an abandoned run is dropped."""
        if self._slots is None or self._slots[0].host.size != buffer_size:
            self._slots = [_Slot(buffer_size, self.config.out_capacity) for _ in range(max(1, self.config.streams))]
        for slot in self._slots:
            if slot.job is not None:
                slot.stream.synchronize()
                slot.job = None
        return self._slots

    def _part(self, n: int) -> int:
        starts = n - self.plan.length + 1
        return max(1, -(-starts // self.work_items))

    def _launch(self, slot: _Slot, store: bool) -> None:
        _, n = slot.job
        s = slot.stream
        slot.counter.copy_to_device(self._zero, stream=s)
        if n >= self.plan.length:
            slot.device[:n].copy_to_device(slot.host[:n], stream=s)
            _kmp_kernel[self.blocks, self.config.threads_per_block, s](
                slot.device, n, self.pattern, self.fail, self.plan.length, self._part(n), slot.out, slot.counter, store
            )
        slot.counter.copy_to_host(slot.count_host, stream=s)

    def _finish(self, slot: _Slot, store: bool) -> tuple[int, int, np.ndarray | None]:
        slot.stream.synchronize()
        offset, n = slot.job
        slot.job = None
        count = int(slot.count_host[0])
        if not store:
            return offset, count, None
        if count > slot.out.size:  # rare: grow the output and run this chunk again
            slot.out = cuda.device_array(count, np.int64)
            self._launch_again(slot, offset, n)
        positions = np.sort(slot.out[:count].copy_to_host(stream=slot.stream)) if count else np.empty(0, np.int64)
        return offset, count, positions

    def _launch_again(self, slot: _Slot, offset: int, n: int) -> None:
        slot.job = (offset, n)
        self._launch(slot, True)
        slot.stream.synchronize()
        slot.job = None
