"""Where an output came from, said once for every output form: the seqsift version, the backend
and device that computed it, and the command line (bwa's @PG header line; the JSON outputs' first
object). Both forms are built here, so SAM, BAM and JSON Lines never disagree."""

from __future__ import annotations

import sys

from seqsift import __version__


def command_line() -> list[str]:
    """This process's command line as the user typed it, program named `seqsift`."""
    return ["seqsift", *sys.argv[1:]]


class Provenance:
    """backend: "cpu" or "cuda" as resolved; command: the command line (this process's by
    default); version: seqsift's. A plain class: the dataclasses module imports inspect, ~10 ms
    of every command's start (docs/benchmarks.md, "Start-up")."""

    __slots__ = ("backend", "command", "version")

    def __init__(self, backend: str, command: list[str] | None = None, version: str = __version__):
        self.backend = backend
        self.command = command_line() if command is None else command
        self.version = version

    @property
    def device(self) -> str:
        from seqsift.backend import describe

        return describe(self.backend)

    def as_dict(self, **extra) -> dict:
        """The JSON Lines opening object: {"seqsift": version, "command": [...], "backend", "device", **extra}."""
        return {"seqsift": self.version, "command": list(self.command), "backend": self.backend,
                "device": self.device, **extra}

    def pg_line(self) -> str:
        """SAM's @PG line: the program, its version, the command line, and backend and device as DS."""
        import shlex  # here: only SAM output writes it, and every command imports this module

        command = shlex.join(self.command).replace("\t", "\\t").replace("\n", " ")  # one field: a tab typed in an
        # argument (bwa's -R '@RG<TAB>ID:..') would split it
        return (f"@PG\tID:seqsift\tPN:seqsift\tVN:{self.version}\tCL:{command}"
                f"\tDS:backend={self.backend}; device={self.device}")


def sam_header(names, lengths, provenance: Provenance, extra=()) -> bytes:
    """@HD (SAM 1.6, unsorted), one @SQ per reference sequence (a length below 1, which SAM does not
    allow, written as 1), the extra lines (e.g. @RG), then @PG."""
    lines = ["@HD\tVN:1.6\tSO:unsorted"]
    lines += [f"@SQ\tSN:{n}\tLN:{max(1, int(length))}" for n, length in zip(names, lengths)]
    lines += list(extra)
    lines.append(provenance.pg_line())
    return ("\n".join(lines) + "\n").encode()
