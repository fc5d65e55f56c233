"""Typed errors: every one names what was wrong so the CLI can report it and exit 2."""

from __future__ import annotations


class SeqsiftError(Exception):
    """Base of every error seqsift raises on purpose; the CLI maps it to exit status 2."""


class UsageError(SeqsiftError, ValueError):
    """A parameter has a value seqsift cannot use; the message names it and the fix."""


class InputError(SeqsiftError, OSError):
    """An input could not be opened or read (missing, unreadable, a directory)."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.why = message  # without the path, for a caller that reports and skips
        super().__init__(f"{path}: {message}")


class OutputError(SeqsiftError, OSError):
    """An output could not be written (missing directory, no permission, disk full)."""

    def __init__(self, path: str, message: str):
        self.path = path
        super().__init__(f"{path}: cannot write: {message}")


class FormatError(SeqsiftError, ValueError):
    """Malformed input, located by path and 1-based line (line 0 when unknown)."""

    def __init__(self, path: str, line: int, message: str):
        self.path = path
        self.line = line
        where = f"{path}:{line}" if line > 0 else path
        super().__init__(f"{where}: {message}")


class BackendUnavailable(SeqsiftError, RuntimeError):
    """The requested backend (e.g. cuda) cannot run on this machine."""
