"""A quiet progress bar on stderr: shown only for runs longer than a moment, on a terminal.

When results go to the same terminal, the bar is erased before each result is written
(`clear`, called by io.writers for a terminal standard output) and drawn again below it at the
next update, so no result line is glued onto the bar. A bar that was shown ends with its final
frame (100% when the run completed) on a line of its own.
"""

from __future__ import annotations

import sys
import time

_shown: list["Progress"] = []  # bars currently drawn on stderr


class Progress:
    """Counts units (bytes, records) done out of an optional total; draws at most 10 times a second."""

    def __init__(self, label: str, total: int | None = None, enabled: bool = True, delay: float = 1.5, unit: str = "B"):
        self.label = label
        self.total = total
        self.done = 0
        self.unit = unit
        self.enabled = enabled and sys.stderr.isatty()
        self.start = time.monotonic()
        self.delay = delay
        self._last_draw = 0.0
        self._ever_drawn = False

    def advance(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start >= self.delay and now - self._last_draw >= 0.1:
            self._last_draw = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        rate = self.done / max(now - self.start, 1e-9)
        text = f"{self.label}: {_human(self.done)}{self.unit}"
        if self.total:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(frac * 30)
            text += f" / {_human(self.total)}{self.unit} [{bar:<30}] {frac:4.0%}"
        text += f"  {_human(rate)}{self.unit}/s"
        sys.stderr.write("\r" + text + "\x1b[K")
        sys.stderr.flush()
        self._ever_drawn = True
        if self not in _shown:
            _shown.append(self)

    def close(self) -> None:
        """The final frame, unthrottled (a throttled bar would stop at its last draw, short of
        100%), on a line of its own; nothing when the bar never appeared."""
        if self._ever_drawn:
            self._draw(time.monotonic())
            sys.stderr.write("\n")
            sys.stderr.flush()
            _shown.remove(self)


def clear() -> None:
    """Erase the bars on stderr before a result is written to the same terminal; each is drawn
    again at its next update."""
    if _shown:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
        _shown.clear()


def _human(n: float) -> str:
    for suffix in ("", "k", "M", "G", "T"):
        if abs(n) < 1000:
            return f"{n:.1f}{suffix}" if suffix else f"{n:.0f}"
        n /= 1000
    return f"{n:.1f}P"
