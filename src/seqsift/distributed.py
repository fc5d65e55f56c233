"""Scale out on Dask: every engine on a cluster, with the results of one machine.

What is generic lives here (the client, sharing files and objects with workers, a worker's cache
of them, submitting one partition and taking its result); each engine's partitions and worker
function live in its own cluster.py, and runner.ordered chooses between this machine's threads and
a client (runner.on_client keeps the partitions in order, a bounded number in flight). One
mechanism serves all four engines:
- the engine cuts its input into partitions in input order (batches of reads or queries at record
  boundaries, groups of files, byte ranges carrying the pattern's overlap);
- what every partition needs (an index, a database, signatures) reaches each worker process once:
  read from its path when every worker sees the same file there (an .ssx index is then
  memory-mapped), otherwise its bytes are broadcast and written to the worker's local directory
  first; objects given in memory are broadcast as they are. What a worker built is kept under a
  key made of the files' whole-content hashes (fingerprint), so an edited file is never answered
  from what was built from it before, and the same hashes tell whether the workers see the files;
- each partition is one task calling the engine's chunk function, the one its local path runs;
- results are taken back in input order, a bounded number in flight.

A task carries its partition (a byte range's path, or the bytes themselves), so when a worker dies
Dask recomputes the partitions it held on another; only this process merges and writes, once per
partition and in order, so nothing is lost or duplicated. An error raised in a worker (a malformed
record, an unreadable file) reaches here as the same exception, with the same message, as locally.

Dask is imported only when a run asks for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from seqsift.errors import SeqsiftError, UsageError
from seqsift.filestatus import identity, settled
from seqsift.lazy import lend

LOCAL = re.compile(r"^local:(\d+)$")
HASH_PIECE = 4 << 20  # a shared file is hashed whole, this many bytes a read
MAX_KEPT = 4  # shared objects a worker process keeps between runs (least recently used dropped)
CONNECT_TIMEOUT = 10


class ClusterError(SeqsiftError, RuntimeError):
    """The cluster could not be reached, or a partition failed there for a reason not its input's."""


def import_dask():
    try:
        import distributed
    except ImportError as exc:
        raise UsageError(f"--dask needs Dask ({exc}): pip install 'seqsift[dask]'") from None
    return distributed


@contextlib.contextmanager
def connect(spec: str) -> Iterator[Any]:
    """A Client: `local:N` starts a LocalCluster of N one-thread worker processes here (closed
    after), anything else is a running scheduler's address."""
    distributed = import_dask()
    match = LOCAL.match(spec)
    cluster = None
    try:
        if match:
            workers = int(match.group(1))
            if workers < 1:
                raise UsageError(f"--dask {spec}: give at least one worker, e.g. local:2")
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                               dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(spec, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"--dask {spec}: no Dask scheduler answered ({exc}); give a scheduler address such as "
                           "tcp://host:8786, or local:N to start N workers here") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


# -- what every partition needs ------------------------------------------------------------------
@dataclass(frozen=True)
class Shared:
    """How a worker makes what the partitions need: build(paths, *options) from files, or
    build(obj, *options) from an object given in memory. exclusive: each task running at once
    gets its own instance (objects with scratch state); otherwise one instance serves all."""

    key: str
    build: Callable
    options: tuple = ()
    paths: tuple[str, ...] = ()
    from_files: bool = True
    exclusive: bool = False


@dataclass(frozen=True)
class Resource:
    spec: Shared
    payload: Any = None  # a Future of the files' bytes or of the object; None: read the paths


_HASHED: dict[tuple, str] = {}  # a file's identity (device, inode, size, times) -> its content hash


def fingerprint(path: str) -> tuple[int, str]:
    """(size, hash of the whole content): the same file, seen from another machine. Whole, because
    a database or index edited in the middle keeps its size and ends, and a worker that kept what
    it built from the old one would answer from it. Each process remembers the hash of a file by
    its identity (device, inode, size, modification and change times: any write sets the change
    time), so a long-lived worker reads an unchanged file once; a file changed in the last two
    seconds is hashed again at every use (a write within the same clock tick may leave its times)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        known = _HASHED.get(identity(st))
        if known is not None:
            return st.st_size, known
        digest = hashlib.blake2b(digest_size=16)
        while piece := f.read(HASH_PIECE):
            digest.update(piece)
    if settled(st):
        _HASHED[identity(st)] = digest.hexdigest()
    return st.st_size, digest.hexdigest()


def _fingerprints(paths: list[str], thorough: bool = True) -> list | None:
    """Per path, its fingerprint (thorough) or its size and modification time; None if one is
    missing or unreadable."""
    try:
        if thorough:
            return [list(fingerprint(p)) for p in paths]
        return [[st.st_size, st.st_mtime_ns] for st in map(os.stat, paths)]
    except OSError:
        return None


def workers_see(client, paths: list[str], thorough: bool = True) -> bool:
    """Whether every worker sees these files at their absolute paths, the same as here: checked
    by content at both ends (thorough, for an index or database), or by size and modification
    time (for inputs, which may be many)."""
    if not paths:
        return True
    paths = [os.path.abspath(p) for p in paths]
    mine = _fingerprints(paths, thorough)
    seen = client.run(_fingerprints, paths, thorough)
    return mine is not None and bool(seen) and all(s == mine for s in seen.values())


def share_files(client, build: Callable, paths: list[str], options: tuple = (), *, exclusive: bool = False,
                send: bool | None = None) -> Resource:
    """Files (index, database, signatures) every worker builds its object from once. send: None
    reads them from their paths where every worker sees them, else broadcasts their bytes; True
    always broadcasts."""
    paths = [os.path.abspath(p) for p in paths]
    prints = _fingerprints(paths)
    if prints is None:
        raise ClusterError(f"cannot read {', '.join(paths)} to share it with the workers")
    key = _key(build, options, prints)
    spec = Shared(key, build, tuple(options), tuple(paths), True, exclusive)
    if send is None:
        send = not workers_see(client, paths)
    if not send:
        return Resource(spec)
    blobs = []
    for p in paths:
        with open(p, "rb") as f:
            blobs.append(f.read())
    return Resource(spec, client.scatter(blobs, broadcast=True, hash=False))


def share_object(client, obj, build: Callable, options: tuple = (), *, exclusive: bool = False) -> Resource:
    """An object given in memory, broadcast to every worker; each builds from it once. (Wrapped
    in a list: Dask scatters a tuple, list or dict element by element.)"""
    future = client.scatter([obj], broadcast=True, hash=False)[0]
    return Resource(Shared(f"object-{future.key}", build, tuple(options), (), False, exclusive), future)


def _key(build: Callable, options: tuple, prints: list) -> str:
    text = repr((build.__module__, build.__qualname__, options, prints))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


# -- on a worker ----------------------------------------------------------------------------------
_LOCK = threading.Lock()
_IDLE: OrderedDict[str, list] = OrderedDict()  # key -> built instances not in use (the one, if not exclusive)
_BUILDING: dict[str, threading.Lock] = {}


def _checkout(spec: Shared, payload) -> Any:
    with _LOCK:
        building = _BUILDING.setdefault(spec.key, threading.Lock())
    with building:  # one build at a time per key: concurrent tasks do not load an index twice
        with _LOCK:
            idle = _IDLE.setdefault(spec.key, [])
            _IDLE.move_to_end(spec.key)
            if idle:
                return idle.pop() if spec.exclusive else idle[0]
        value = spec.build(_inputs(spec, payload), *spec.options)
        if not spec.exclusive:
            _keep(spec.key, value)
        return value


def _checkin(spec: Shared, value) -> None:
    if spec.exclusive:
        _keep(spec.key, value)


def _keep(key: str, value) -> None:
    with _LOCK:
        _IDLE.setdefault(key, []).append(value)
        _IDLE.move_to_end(key)
        while len(_IDLE) > MAX_KEPT:
            _IDLE.popitem(last=False)


def _inputs(spec: Shared, payload):
    """The paths to build from (written to this worker's disk once when they were sent), or the
    object given in memory."""
    if not spec.from_files:
        return payload
    if payload is None:
        return spec.paths
    try:
        from distributed import get_worker

        base = get_worker().local_directory
    except (ImportError, ValueError):
        base = tempfile.gettempdir()
    folder = os.path.join(base, "seqsift-shared", spec.key)
    os.makedirs(folder, exist_ok=True)
    local = []
    for i, (path, blob) in enumerate(zip(spec.paths, payload)):
        target = os.path.join(folder, f"{i}-{os.path.basename(path)}")
        if not (os.path.exists(target) and os.path.getsize(target) == len(blob)):
            fd, tmp = tempfile.mkstemp(dir=folder)
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, target)
        local.append(target)
    return tuple(local)


def _run_partition(chunk: Callable, spec: Shared, payload, part):
    value = _checkout(spec, payload)
    try:
        return chunk(value, part)
    finally:
        _checkin(spec, value)


# -- one partition --------------------------------------------------------------------------------
def submit_part(client, resource: Resource, chunk: Callable, part):
    """A Future of chunk(shared object, part) on the cluster (the runner keeps them in order)."""
    import dask

    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "4GiB"}):
        return client.submit(_run_partition, chunk, resource.spec, resource.payload, part, pure=False)


def take_part(future):
    """The result of a partition's Future; one that failed on every worker that tried it is a
    ClusterError, other errors arrive as the partition raised them."""
    distributed = import_dask()
    try:
        result = future.result()
    except distributed.KilledWorker as exc:
        raise ClusterError(f"a partition failed on every worker that tried it ({exc}); the workers' logs say "
                           "why (memory is the usual cause)") from None
    future.release()
    return result


# -- the engines, from Python ---------------------------------------------------------------------
# Each engine's cluster module defines its functions (the local functions' parameters, the client
# first); they are named here, by string, so that this module imports no engine.
_ENGINES = {
    "find": "seqsift.find.cluster",
    "find_count": "seqsift.find.cluster",
    "find_records": "seqsift.find.cluster",
    "scan": "seqsift.scan.cluster",
    "search": "seqsift.fmindex.cluster",
    "search_database": "seqsift.alignment.cluster",
}
__getattr__, __dir__ = lend(__name__, _ENGINES)
