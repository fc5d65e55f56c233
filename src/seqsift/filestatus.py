"""A file's status (stat) standing for its content: what remembers work done on a file (an index
checked in full, a file's hash on a Dask worker, the sources' digest behind the kernel cache's key)
keys it on the file's identity and trusts it only once the file has settled.

Any write to a file sets its change time, which only root can set back, so an unchanged identity
means unchanged bytes, with one exception, git's "racy" rule: a write within the same tick of the
filesystem's clock as the one before can leave the times as they were. So a file changed less
than SETTLED_NS ago is never remembered; it is read again at every use.
"""

from __future__ import annotations

import os
import time

SETTLED_NS = 2_000_000_000  # how long a file must have been left alone before its status is trusted


def identity(st: os.stat_result) -> str:
    """Device, inode, size, modification and change times (ns): what changes whenever the bytes do."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def settled(st: os.stat_result, now: int | None = None) -> bool:
    """Whether the file was last changed at least SETTLED_NS ago (now: time.time_ns())."""
    return (time.time_ns() if now is None else now) - max(st.st_mtime_ns, st.st_ctime_ns) >= SETTLED_NS
