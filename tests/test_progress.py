import io

from seqsift import progress


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_drawn_on_a_terminal_after_the_delay(monkeypatch):
    term = FakeTerminal()
    monkeypatch.setattr(progress.sys, "stderr", term)
    bar = progress.Progress("find x", total=1000, delay=0.0)
    bar.advance(500)
    assert "50%" in term.getvalue() and "find x" in term.getvalue()
    bar.close()
    assert term.getvalue().endswith("\r\x1b[K")


def test_silent_when_not_a_terminal_quiet_or_quick(monkeypatch):
    pipe = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", pipe)
    progress.Progress("a", 10, delay=0.0).advance(5)
    term = FakeTerminal()
    monkeypatch.setattr(progress.sys, "stderr", term)
    progress.Progress("b", 10, enabled=False, delay=0.0).advance(5)
    progress.Progress("c", 10, delay=60.0).advance(5)
    assert pipe.getvalue() == "" and term.getvalue() == ""
