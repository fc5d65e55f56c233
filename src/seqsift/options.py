"""What every subcommand shares below the CLI: option types, the common and Dask option groups,
messages on stderr, and the one table of exit codes.

The engines' command modules build their parsers from these; `cli.py`, above them, parses and
dispatches. Nothing here imports an engine (tests/test_imports.py checks the direction).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import re
import sys

from seqsift import backend as backends

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~6 ms of a start)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

# Exit codes. Each command keeps the convention of the tool it stands in for: grep's for find
# (0 something matched, 1 nothing did); clamscan's for scan (0 nothing found, 1 a signature
# matched); bwa's for search (0 when it ran, matched or not: a read set with no hit is a result,
# and pipelines under `set -e` go on). Every command: 2 on an error.
EXIT_OK = 0  # done (index, search, align, simulate, stats, lab, demo; check found every result right)
EXIT_FOUND = 0  # find: something matched
EXIT_NONE = 1  # find: nothing matched
EXIT_CLEAN = 0  # scan: no signature matched
EXIT_INFECTED = 1  # scan: a signature matched
EXIT_WRONG = 1  # check: some results are wrong
EXIT_ERROR = 2  # usage or input error, every command
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)

# Which symlinks a walk follows (io/tree.py): clamscan's values of --follow-dir-symlinks and
# --follow-file-symlinks.
NEVER, NAMED, ALWAYS = 0, 1, 2

# Patterns here and in precompiled.py and io/writers.py are compiled on first use (re's own cache),
# not when the module is imported: ~0.1-0.4 ms each of every command's start.
_SIZE = r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kKmMgGtT]?)(i?[bB])?\s*$"


def parse_size(text: str) -> int:
    """'64M', '1G', '1.71G', '4096' -> bytes (binary multiples, a fraction rounded down), so that
    the figure `index --memory` names when it is too little ("at least 1.71 GiB") can be given back
    as it is written."""
    match = re.match(_SIZE, text)
    size = 0
    if match:
        whole, _, fraction = match.group(1).partition(".")
        shift = 10 * " KMGT".index(match.group(2).upper() or " ")
        size = (int(whole + fraction or "0") << shift) // 10 ** len(fraction)
    if size < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: use a number with an optional K, M or G, e.g. 64M")
    return size


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def port_number(text: str) -> int:
    """A TCP port: 1 to 65535."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1 to 65535)")
    return value


def terminal_columns() -> int:
    """The width shutil.get_terminal_size gives: $COLUMNS, else standard output's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


@functools.lru_cache(maxsize=None)
def sized(formatter: type) -> type:
    """`formatter` told the width it would ask shutil for (argparse imports shutil, and with it
    bz2, lzma and fnmatch, ~3 ms of every command's start, only for that), the same help text."""

    class Sized(formatter):
        def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
            super().__init__(prog, indent_increment, max_help_position,
                             terminal_columns() - 2 if width is None else width)

    Sized.__name__ = Sized.__qualname__ = f"Sized{formatter.__name__}"
    return Sized


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with a sized() formatter; the subparsers of one are of this class too."""

    def __init__(self, *args, formatter_class: type = argparse.HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=sized(formatter_class), **kwargs)


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand takes."""
    p = ArgumentParser(add_help=False)
    g = p.add_argument_group("common options")
    g.add_argument("-t", "--threads", type=positive_int, default=backends.default_threads(),
                   help="CPU threads (default: all %(default)s cores)")
    g.add_argument("-o", "--output", metavar="FILE", help="write results to FILE (default: standard output); "
                   "FILE.gz is written gzipped, FILE.bam as BAM where the output is SAM")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar or messages on stderr")
    g.add_argument("--backend", choices=backends.BACKENDS, default="auto",
                   help="where kernels run; auto takes a GPU when one is usable (default: %(default)s)")
    g.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return p


def warn(args: argparse.Namespace, message: str) -> None:
    """A message on stderr unless -q (errors are always shown)."""
    if not getattr(args, "quiet", False):
        sys.stderr.write(f"seqsift {args.command}: {message}\n")


def add_dask_options(parser, unit: str, kind: Callable | None = None) -> None:
    """The --dask options of a subcommand; unit says what --partition counts for this engine, kind
    parses it (a whole number of at least 1 by default)."""
    kind = kind or positive_int
    g = parser.add_argument_group("cluster (Dask)")
    g.add_argument("--dask", metavar="ADDRESS",
                   help="run on a Dask cluster: a scheduler address (tcp://host:8786) or local:N for N worker "
                   "processes here; results are the same as without it")
    g.add_argument("--partition", type=kind, metavar="N", help=f"{unit} per task sent to a worker")


@contextlib.contextmanager
def dask_run(args, total: int | None = None) -> Iterator[tuple[Any, Any]]:
    """A subcommand's --dask run: (client, progress bar counting partitions), the workers and the
    dashboard's address told on stderr unless -q."""
    from seqsift.distributed import connect
    from seqsift.progress import Progress

    with connect(args.dask) as client:
        workers = client.scheduler_info().get("workers", {})
        threads = sum(w.get("nthreads", 0) for w in workers.values())
        warn(args, f"Dask: {len(workers)} workers, {threads} threads; dashboard {client.dashboard_link}")
        progress = Progress(args.command, total, enabled=not args.quiet, unit=" partitions")
        try:
            yield client, progress
        finally:
            progress.close()
