"""Hostile conditions around every command (issue item 9): SIGTERM and SIGHUP clean up as Ctrl-C
does, a full disk names the output, out-of-range option values are named; each run in a child
bounded in memory and CPU (tests/bounded.py)."""

import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from tests.bounded import SRC, run_bounded, swapping_walk, text


def test_handlers_are_set_in_the_main_thread_only_and_restored(tmp_path, capsys, monkeypatch):
    """cli._terminating sets SIGTERM's and SIGHUP's handlers while a command runs in the main
    thread, and puts the old ones back after; a command run in another thread (a Dask worker's,
    a test's) leaves them as they are, and still runs."""
    import threading

    from seqsift import cli

    (tmp_path / "a.txt").write_bytes(b"xxACGTxx")
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    seen = {}

    def probe(args):  # the command's own run(), wrapped: the handlers as the command sees them
        seen[threading.current_thread() is threading.main_thread()] = {sig: signal.getsignal(sig) for sig in before}
        return run(args)

    parser = cli.build_parser("find")
    run = parser.commands["find"].get_default("run")
    parser.commands["find"].set_defaults(run=probe)
    monkeypatch.setattr(cli, "build_parser", lambda command=None: parser)
    argv = ["find", "-q", "ACGT", str(tmp_path / "a.txt")]
    assert cli.main(argv) == 0
    codes = []
    worker = threading.Thread(target=lambda: codes.append(cli.main(argv)))
    worker.start()
    worker.join()
    assert codes == [0] and capsys.readouterr().out == f"{tmp_path / 'a.txt'}\t2\n" * 2  # found in both runs
    assert all(handler is not before[sig] for sig, handler in seen[True].items())  # set in the main thread
    assert seen[False] == before  # untouched in another
    assert {sig: signal.getsignal(sig) for sig in before} == before  # and restored


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_remove_the_partial_output(tmp_path, signum):
    """A run stopped while its output is being written leaves no .NAME.XXXX.part file and exits
    128 + the signal (143 for SIGTERM), as Ctrl-C leaves none and exits 130."""
    out = tmp_path / "out.txt"
    child = subprocess.Popen([sys.executable, "-m", "seqsift", "find", "ACGT", "-", "-o", str(out)],
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                             env=dict(os.environ, PYTHONPATH=SRC), preexec_fn=_signal_default(signum))
    try:
        child.stdin.write(b"ACGT" * 100_000)
        child.stdin.flush()
        for _ in range(6000):  # until the output's temporary file exists (the command is writing it)
            if any(name.endswith(".part") for name in os.listdir(tmp_path)):
                break
            time.sleep(0.05)
        assert any(name.endswith(".part") for name in os.listdir(tmp_path))
        child.send_signal(signum)
        _, err = child.communicate(timeout=600)  # stdin closed too: a run that ignored the signal ends
    finally:
        child.kill()
    assert child.returncode == 128 + signum, err
    assert f"{signal.Signals(signum).name} received" in err.decode()
    assert os.listdir(tmp_path) == []  # neither the output nor its temporary file


def _signal_default(signum):
    """The child's handler of signum reset to the default: under `nohup` (SIGHUP ignored, and so
    inherited) seqsift rightly keeps ignoring it, which is not what this test is about."""
    return lambda: signal.signal(signum, signal.SIG_DFL)


def _file_size_limit():
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))  # writes past it fail with EFBIG


def test_a_full_disk_names_the_output(tmp_path):
    data = tmp_path / "a.txt"
    data.write_bytes(b"ACGT" * 200_000)
    out = tmp_path / "hits.txt"
    run = subprocess.run([sys.executable, "-m", "seqsift", "find", "ACGT", str(data), "-o", str(out)],
                         preexec_fn=_file_size_limit, capture_output=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=SRC))
    assert run.returncode == 2
    assert f"{out}: cannot write: File too large" in run.stderr.decode()
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]  # no half file, no temporary one


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("where", ["-o", "stdout"])
def test_dev_full_names_the_output(tmp_path, where):
    data = tmp_path / "a.txt"
    data.write_bytes(b"ACGT\n" * 1000)
    args = ["find", "ACGT", str(data)] + (["-o", "/dev/full"] if where == "-o" else [])
    with open("/dev/full", "wb") as full:
        run = subprocess.run([sys.executable, "-m", "seqsift", *args], stdout=full, stderr=subprocess.PIPE,
                             timeout=600, env=dict(os.environ, PYTHONPATH=SRC))
    shown = "/dev/full" if where == "-o" else "(standard output)"
    assert run.returncode == 2
    assert f"{shown}: cannot write: No space left on device" in run.stderr.decode()


def test_a_port_past_65535_is_named():
    run = run_bounded(["lab", "--port", "70000", "--no-browser"])
    out, err = text(run)
    assert run.returncode == 2 and "'70000' is not a port number (1 to 65535)" in err and "internal error" not in err


def test_o_keeps_an_existing_files_mode(tmp_path):
    data = tmp_path / "a.txt"
    data.write_bytes(b"ACGT\n")
    out = tmp_path / "private.txt"
    out.write_text("old")
    out.chmod(0o600)
    run = run_bounded(["find", "ACGT", str(data), "-o", str(out)])
    assert run.returncode == 0, text(run)[1]
    assert out.stat().st_mode & 0o777 == 0o600 and out.read_bytes() != b"old"


def test_find_escapes_control_characters_in_file_names(tmp_path):
    """Issue item 9: find's TSV rows name the file; a name with a newline and a tab would forge a
    row with fields of its own choosing. Text cells are escaped (io.writers.printable); JSON
    keeps the name as a JSON string."""
    import json

    forged = tmp_path / "a\nforged\t999"
    forged.write_bytes(b"xxACGTxxACGT")
    run = run_bounded(["find", "ACGT", str(forged)])
    out, err = text(run)
    assert run.returncode == 0, err
    assert out == f"{tmp_path}/a\\nforged\\t999\t2\n{tmp_path}/a\\nforged\\t999\t8\n"
    run = run_bounded(["find", "ACGT", str(forged), "--json"])
    assert [json.loads(line)["path"] for line in text(run)[0].splitlines()[1:]] == [str(forged)] * 2


def test_find_r_refuses_a_file_swapped_for_a_fifo_after_the_walk(tmp_path):
    """`find -r` opens each walked file once without a stat before: a fifo standing where the walk
    saw a regular file is refused on its descriptor (opened non-blocking), never waited on; the
    files before it are counted, the error names it, exit 2."""
    top = tmp_path / "top"
    top.mkdir()
    (top / "a").write_bytes(b"xxabcxxabc")
    (top / "b-swapped").write_bytes(b"abc")
    code = swapping_walk("tree.walk = swapping")
    run = run_bounded(["find", "-q", "-c", "-r", "abc", str(top)], code=code)
    out, err = text(run)
    assert run.returncode == 2, err
    assert out == f"{top / 'a'}\t2\n"
    assert f"{top / 'b-swapped'}" in err and "fifo" in err and "internal error" not in err
