"""Index files already checked in full, remembered so that loading a large one again costs ~nothing.

The full check of an .ssx file (its checksums, and the invariants the kernels rely on: ssx.py)
reads every byte: ~0.1 s for a 100 Mbp genome, seconds for a mammal's, and it pulls the whole
file into memory, which memory-mapping it was meant to avoid. Once a file has passed, an empty
marker named by the file's identity (device, inode, size, modification and change times) and by
the checking code (every seqsift source) is kept in the cache directory; a later load of that
file, unchanged, skips the checks that read the arrays. Any write to the file sets its change
time, which only root can set back, so a modified file is checked again. As in git's "racy"
rule, a file changed less than two seconds ago is not remembered: a write within the same clock
tick could leave its times as they were. Where the cache is not writable, every load checks in full.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from seqsift.precompiled import cache_dir, sources_digest

SETTLED_NS = 2_000_000_000  # how long a file must have been left alone before it is remembered


def _marker(st: os.stat_result) -> Path:
    identity = f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}".encode()
    return cache_dir() / "checked-indexes" / hashlib.sha256(identity + b"\0" + sources_digest()).hexdigest()[:32]


def seen(st: os.stat_result) -> bool:
    """Whether the file with this status passed the full check before, unchanged since."""
    return _marker(st).is_file()


def remember(st: os.stat_result) -> None:
    """Record that the file with this status passed the full check (unless it changed too
    recently to be sure a later change would show; an unwritable cache is skipped)."""
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < SETTLED_NS:
        return
    marker = _marker(st)
    try:
        marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass
