"""The GPU engines' launch and pipeline sizes (backend.GpuConfig lends it from here, so that a
command on the CPU does not import typing for its NamedTuple)."""

from typing import NamedTuple


class GpuConfig(NamedTuple):
    """Launch and pipeline sizes of the GPU engines, one place for all of them; tests shrink them
    to run under the simulator. Each engine reads the fields it launches with. A NamedTuple
    (config._replace(streams=1) for a variant), not a dataclass: the dataclasses module imports
    inspect, ~10 ms of every command's start (docs/benchmarks.md, "Start-up")."""

    threads_per_block: int = 256
    blocks_per_sm: int = 8  # find: blocks per multiprocessor
    blocks: int = 4096  # scan: the grid, grid-stride beyond it
    streams: int = 3  # find: chunks in flight; 1 runs them one after another (the no-overlap baseline)
    out_capacity: int = 1 << 16  # find: positions a launch stores per stream
    capacity: int = 1 << 20  # scan: candidates a launch holds before it is rerun larger
    # The simulator reports no multiprocessor count; launches there use this many.
    fallback_sms: int = 1
