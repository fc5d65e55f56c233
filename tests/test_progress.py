import io

from seqsift import progress
from seqsift.io.writers import atomic_output


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_drawn_on_a_terminal_after_the_delay(monkeypatch):
    term = FakeTerminal()
    monkeypatch.setattr(progress.sys, "stderr", term)
    bar = progress.Progress("find x", total=1000, delay=0.0)
    bar.advance(500)
    assert "50%" in term.getvalue() and "find x" in term.getvalue()
    bar.advance(500)  # within 0.1 s of the last draw: not drawn, and yet the bar ends at 100%
    bar.close()
    last = term.getvalue().rsplit("\r", 1)[1]
    assert "100%" in last and last.endswith("\n")


def test_silent_when_not_a_terminal_quiet_or_quick(monkeypatch):
    pipe = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", pipe)
    progress.Progress("a", 10, delay=0.0).advance(5)
    term = FakeTerminal()
    monkeypatch.setattr(progress.sys, "stderr", term)
    progress.Progress("b", 10, enabled=False, delay=0.0).advance(5)
    progress.Progress("c", 10, delay=60.0).advance(5)
    assert pipe.getvalue() == "" and term.getvalue() == ""


def test_results_on_the_same_terminal_are_never_glued_to_the_bar(monkeypatch):
    screen = FakeTerminal()  # stderr and stdout on one terminal, as a user sees them

    class Stdout(FakeTerminal):
        buffer = type("Buffer", (), {"write": lambda self, b: screen.write(b.decode()), "flush": lambda self: None})()

    monkeypatch.setattr(progress.sys, "stderr", screen)
    monkeypatch.setattr("seqsift.io.writers.sys.stdout", Stdout())
    bar = progress.Progress("find", total=100, delay=0.0)
    bar.advance(40)
    with atomic_output(None) as out:
        out.write(b"a.txt\t7\n")
        bar._last_draw = 0.0  # the next update is due
        bar.advance(60)
        out.write(b"b.txt\t9\n")
    bar.close()
    text = screen.getvalue()
    for result in ("a.txt\t7\n", "b.txt\t9\n"):  # each written at the start of an erased line
        assert "\r\x1b[K" + result in text
    last = text.rsplit("\r", 1)[1]  # the final frame, on a line of its own after the results
    assert "[" + "#" * 30 + "] 100%" in last and last.endswith("\n") and "txt" not in last
