"""The `seqsift` command: one subcommand per engine, one place that maps errors to exit codes.

Exit status: each command's own for its results (options.py: grep's 0 found / 1 none for find,
clamscan's 0 clean / 1 found for scan, even beside an error, bwa's 0 for search whether or not a read
matched), 2 usage or input error, 130 interrupted (Ctrl-C), 143 on SIGTERM and 129 on SIGHUP, after
the same clean-up.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys

from seqsift import __version__
from seqsift.errors import SeqsiftError
from seqsift.options import EXIT_ERROR, EXIT_INTERRUPTED, ArgumentParser, common_options

# Each subcommand: the module defining it, and the line `seqsift --help` lists it with. Only the
# module a command line names is imported, so a command does not pay for the others' imports, and
# `seqsift --version` or `--help` imports none: a command module imports its engine when it runs
# (tests/cli/test_startup.py checks that `SUBCOMMAND --help` imports neither Numba nor an engine).
COMMANDS = {
    "find": ("seqsift.find.command", "every occurrence of a pattern in files (data-parallel KMP)"),
    "scan": ("seqsift.scan.command", "scan files for signatures (ClamAV .ndb or hex lists): filter, then verify"),
    "lab": ("seqsift.lab.command", "the Filter Lab: watch scanning throughput fall as candidates rise"),
    "index": ("seqsift.fmindex.commands", "build an FM-index (.ssx) of a DNA reference"),
    "search": ("seqsift.fmindex.commands", "exact matches of DNA reads in an FM-index, both strands"),
    "simulate": ("seqsift.fmindex.simulate", "simulate test reads from a reference (FASTQ)"),
    "check": ("seqsift.fmindex.check", "verify `seqsift search` results against the reference"),
    "stats": ("seqsift.fmindex.stats", "statistics of an index, and of searching reads in it"),
    "align": ("seqsift.alignment.command", "Smith-Waterman alignment of queries against a database"),
    "map": ("seqsift.map.command", "map sequencing reads to a reference (SAM, as bwa mem)"),
    "demo": ("seqsift.demo", "run every engine on the embedded lambda phage genome"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of `command`, from its module; for anything else (--version, --help, no or an
    unknown command) one that only lists the commands, with no module imported."""
    parser = ArgumentParser(prog="seqsift", description="Find patterns in large data fast.")
    parser.add_argument("--version", action="version", version=f"seqsift {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if command in COMMANDS:
        importlib.import_module(COMMANDS[command][0]).add_parser(sub, common_options())
    else:
        for name, (_, summary) in COMMANDS.items():
            sub.add_parser(name, help=summary, add_help=False)
    parser.commands = sub.choices  # each subcommand's parser, for its own usage line on an error
    return parser


def command_named(argv: list[str]) -> str | None:
    """The subcommand a command line names: its first word that is not an option."""
    return next((word for word in argv if not word.startswith("-")), None)


def attach_values(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """grep's rule for the options a command lists in VALUE_OPTIONS (find's -e and -f): the word
    after one is its value, whatever it looks like (`find -e -foo` searches for '-foo'), where
    argparse takes a word starting with '-' for an option. Such a pair becomes one word, -eVALUE
    or --option=VALUE; words after `--` are left as they are."""
    out, k = [], 0
    while k < len(argv):
        word = argv[k]
        if word == "--":
            return out + argv[k:]
        if word in options and k + 1 < len(argv) and argv[k + 1].startswith("-"):
            out.append(word + ("=" if word.startswith("--") else "") + argv[k + 1])
            k += 2
            continue
        out.append(word)
        k += 1
    return out


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """argparse leaves arguments no subcommand knows to the top-level parser, whose message
    shows `seqsift [-h] [--version] COMMAND ...`; the subcommand's parser reports them instead,
    with its own usage line, as for any other mistake in its options."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _no_blas_threads() -> None:
    """numpy's bundled OpenBLAS starts a thread per core when numpy is imported, and each spins
    for ~0.1 s before it sleeps (0.1 s of CPU a command on this 2-core machine, a core's worth
    per extra core elsewhere, competing with the command's own threads). No command does linear
    algebra, so none starts them. Before numpy is imported; the user's own setting wins."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> int:
    _no_blas_threads()
    argv = sys.argv[1:] if argv is None else argv
    command = command_named(argv)
    parser = build_parser(command)
    if command in COMMANDS:
        argv = attach_values(argv, getattr(importlib.import_module(COMMANDS[command][0]), "VALUE_OPTIONS", ()))
    try:
        args = parse(parser, argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        return int(exc.code or 0)
    try:
        with _terminating():
            return args.run(args)
    except KeyboardInterrupt:
        sys.stderr.write("seqsift: interrupted\n")
        return EXIT_INTERRUPTED
    except Terminated as exc:
        sys.stderr.write(f"seqsift: {signal.Signals(exc.signum).name} received, stopped\n")
        return 128 + exc.signum
    except BrokenPipeError:  # e.g. `seqsift find ... | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except SeqsiftError as exc:
        sys.stderr.write(f"seqsift {args.command}: error: {exc}\n")
        return EXIT_ERROR
    except Exception as exc:
        if getattr(args, "debug", False):
            import traceback

            traceback.print_exc()
        else:
            sys.stderr.write(f"seqsift {args.command}: internal error: {exc!r} (run with --debug for details)\n")
        return EXIT_ERROR


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised in the main thread as Ctrl-C's KeyboardInterrupt is, so the same
    clean-up runs (temporary outputs removed, threads stopped) and the command exits 128 + the signal."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _terminating():
    """SIGTERM and SIGHUP raise Terminated while a command runs (main thread only; elsewhere, as
    in a Dask worker or a test's thread, the handlers stay as they are: signal.signal refuses
    another thread with ValueError, so no handler is set there, and threading is not imported)."""

    def stop(signum, frame):
        raise Terminated(signum)

    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    old = {}
    try:
        for sig in wanted:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                old[sig] = signal.signal(sig, stop)
    except ValueError:  # not the main thread: nothing was set
        yield
        return
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def entry() -> None:
    """Console-script entry. Every output is written and closed when main() returns, so the
    process ends there without the interpreter's teardown: unloading Numba's compiled code
    takes ~0.35 s (a third of a small search's run time), and after Ctrl-C a reader thread may
    still be blocked in read() on a pipe, holding its lock."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
