"""Hostile-input checks run in a child process held to a memory and CPU limit (resource.setrlimit),
so a regression shows as a failed run (MemoryError, SIGXCPU) instead of a machine brought down or a
test that never ends; a command that blocks without using CPU is ended by the wall-clock bound."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

MEMORY = 2 << 30  # address space: the interpreter, Numba and the buffers fit well under it
CPU_SECONDS = 300  # far above a correct run; a quadratic one passes it
WALL_SECONDS = 600  # for a child that blocks (a fifo, a lock) and so uses no CPU
SRC = str(Path(__file__).resolve().parent.parent / "src")
ROOT = str(Path(__file__).resolve().parent.parent)


def _limits(memory: int, cpu: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    return apply


def run_bounded(args: list[str], *, code: str | None = None, memory: int = MEMORY, cpu: int = CPU_SECONDS,
                env: dict | None = None, cwd: str | os.PathLike | None = None, input: bytes | None = None,
                wall: int = WALL_SECONDS) -> subprocess.CompletedProcess:
    """`seqsift ARGS` (or `python -c CODE ARGS`) in a bounded child; stdout and stderr as text."""
    environment = dict(os.environ, **(env or {}))
    environment["PYTHONPATH"] = os.pathsep.join([SRC, ROOT] + [p for p in [environment.get("PYTHONPATH")] if p])
    command = [sys.executable, "-c", code, *args] if code is not None else [sys.executable, "-m", "seqsift", *args]
    return subprocess.run(command, preexec_fn=_limits(memory, cpu), env=environment, cwd=cwd, input=input,
                          capture_output=True, timeout=wall)


def text(run: subprocess.CompletedProcess) -> tuple[str, str]:
    return run.stdout.decode(errors="replace"), run.stderr.decode(errors="replace")


def swapping_walk(patch: str) -> str:
    """A child's code running the CLI with io.tree.walk wrapped so that a walked path ending in
    'swapped' is replaced by a fifo just after the walk saw it as a regular file; `patch` is the
    statement that installs the wrapper `swapping` where the command looks walk up."""
    return ("import os, sys\n"
            "from seqsift.io import tree\n"
            "walk = tree.walk\n"
            "def swapping(paths, recursive, report, *follow, **options):\n"
            "    for shown, p in walk(paths, recursive, report, *follow, **options):\n"
            "        if p.endswith('swapped'):\n"
            "            os.unlink(p); os.mkfifo(p)\n"
            "        yield shown, p\n"
            f"{patch}\n"
            "from seqsift.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
