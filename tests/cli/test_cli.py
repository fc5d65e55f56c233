"""`seqsift find` as a user runs it: output formats, exit codes, errors, atomic output, Ctrl-C."""

import argparse
import gzip
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from seqsift.cli import main
from tests import naive
from tests.conftest import LAMBDA


def run(capsysbinary, *argv):
    code = main(["find", "-q", *argv])
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


@pytest.fixture
def files(tmp_path):
    a = tmp_path / "a.txt"
    a.write_bytes(b"abcabcab\x00abc")
    b = tmp_path / "b.txt"
    b.write_bytes(b"xyz")
    return a, b


def test_offsets_count_and_exit_status(capsysbinary, files):
    a, b = files
    code, out, _ = run(capsysbinary, "abc", str(a), str(b))
    assert code == 0 and out == f"{a}\t0\n{a}\t3\n{a}\t9\n"
    code, out, _ = run(capsysbinary, "-c", "abc", str(a), str(b))
    assert code == 0 and out == f"{a}\t3\n{b}\t0\n"
    code, out, _ = run(capsysbinary, "nothere", str(a))
    assert code == 1 and out == ""


def test_hex_pattern(capsysbinary, files):
    a, _ = files
    code, out, _ = run(capsysbinary, "--hex", "6200", str(a))
    assert code == 0 and out == f"{a}\t7\n"
    code, _, err = run(capsysbinary, "--hex", "6zz", str(a))
    assert code == 2 and "not valid hex" in err


def test_empty_pattern_and_longer_than_text(capsysbinary, files):
    a, b = files
    code, _, err = run(capsysbinary, "", str(a))
    assert code == 2 and "empty" in err
    code, out, _ = run(capsysbinary, "xyzxyzxyz", str(b))
    assert code == 1 and out == ""


def test_missing_file_named_others_searched(capsysbinary, files, tmp_path):
    a, _ = files
    code, out, err = run(capsysbinary, "abc", str(tmp_path / "gone"), str(a), str(tmp_path))
    assert code == 2
    assert out == f"{a}\t0\n{a}\t3\n{a}\t9\n"
    assert f"{tmp_path / 'gone'}: no such file" in err and f"{tmp_path}: is a directory" in err


def test_stdin(files):
    a, _ = files
    for args in ([], ["-"]):
        r = subprocess.run([sys.executable, "-m", "seqsift", "find", "-q", "-c", "abc", *args],
                           input=a.read_bytes(), capture_output=True)
        assert r.returncode == 0 and r.stdout == b"-\t3\n"


def test_fasta_revcomp_rows_and_counts(capsysbinary):
    path = LAMBDA
    records = naive.read_records(path)
    want = naive.record_hits(records, "GGATCCA", revcomp=True)
    code, out, _ = run(capsysbinary, "--fasta", "--revcomp", "ggatcca", str(path))
    assert code == 0
    assert out.splitlines() == [f"{path}\t{r}\t{p}\t{s}" for r, p, s in want]
    code, out, _ = run(capsysbinary, "--fasta", "--revcomp", "-c", "GGATCCA", str(path))
    assert out == f"{path}\t{len(want)}\n"
    code, _, err = run(capsysbinary, "--revcomp", "GGATCC", str(path))
    assert code == 2 and "--revcomp needs --fasta" in err


def test_json_lines_carry_provenance(capsysbinary, files):
    a, _ = files
    code, out, _ = run(capsysbinary, "--json", "abc", str(a))
    lines = [json.loads(x) for x in out.splitlines()]
    assert lines[0]["seqsift"] and lines[0]["backend"] == "cpu" and "device" in lines[0]
    assert lines[1:] == [{"path": str(a), "offset": o} for o in (0, 3, 9)]


def test_output_file_is_atomic(capsysbinary, tmp_path):
    good = tmp_path / "good.fa"
    good.write_text(">a\nACGTACGT\n")
    bad = tmp_path / "bad.fa.gz"
    bad.write_bytes(gzip.compress(b">a\nACGT\n" * 100 + b">b\nAC#GT\n"))
    out = tmp_path / "hits.tsv"
    code, _, err = run(capsysbinary, "--fasta", "-o", str(out), "ACGT", str(good), str(bad))
    assert code == 2 and f"{bad}:202: invalid character '#'" in err
    # the malformed file is named and skipped (grep's rule: the other files' matches are kept; its
    # one batch failed whole); no leftover temp file
    assert sorted(os.listdir(tmp_path)) == ["bad.fa.gz", "good.fa", "hits.tsv"]
    assert out.read_text() == f"{good}\ta\t0\t+\n{good}\ta\t4\t+\n"
    code, _, _ = run(capsysbinary, "--fasta", "-o", str(out), "ACGT", str(good))
    assert code == 0 and out.read_text() == f"{good}\ta\t0\t+\n{good}\ta\t4\t+\n"


def test_version_help_and_module_entry_points():
    r = subprocess.run([sys.executable, "-m", "seqsift", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("seqsift ")
    script = os.path.join(os.path.dirname(sys.executable), "seqsift")
    r = subprocess.run([script, "find", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--chunk-size" in r.stdout and "--revcomp" in r.stdout
    r = subprocess.run([script, "find"], capture_output=True, text=True)
    assert r.returncode == 2 and "PATTERN" in r.stderr


def test_standard_input_redirected_from_a_large_file(tmp_path, rng):
    """`< file` past the packing limit is mapped as the file would be (io.mapped): the counts and
    offsets of a pipe of the same bytes, and of the oracle."""
    from seqsift.find.api import PACK_FILE_MAX

    data = rng.integers(97, 100, 2 * PACK_FILE_MAX + 99, dtype=np.uint8).tobytes()
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    want = naive.find_all(data, b"abca")
    for flags, expected in (([], "".join(f"-\t{o}\n" for o in want)), (["-c"], f"-\t{len(want)}\n")):
        argv = [sys.executable, "-m", "seqsift", "find", "-q", "-t", "2", *flags, "abca"]
        piped = subprocess.run(argv, input=data, capture_output=True)
        with open(path, "rb") as f:
            redirected = subprocess.run(argv, stdin=f, capture_output=True)
        assert piped.returncode == redirected.returncode == 0, redirected.stderr
        assert redirected.stdout.decode() == piped.stdout.decode() == expected


def test_ctrl_c_exits_130_without_traceback():
    """SIGINT while reading a stdin that never ends."""
    # as from a terminal: a run started in the background of a script inherits SIGINT ignored,
    # and Python then keeps ignoring it (no KeyboardInterrupt), as a nohup'd job should
    proc = subprocess.Popen([sys.executable, "-m", "seqsift", "find", "-q", "abc"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    proc.stdin.write(b"x" * 1000)
    proc.stdin.flush()
    time.sleep(3)  # past start-up and compilation, now blocked reading stdin
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"interrupted" in err


def test_broken_pipe_is_quiet(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"ab" * 2_000_000)
    r = subprocess.run(f"'{sys.executable}' -m seqsift find -q a '{big}' | head -n 2", shell=True, capture_output=True)
    assert r.stdout.count(b"\n") == 2 and b"Traceback" not in r.stderr


def test_demo_reports_every_engine(capsys):
    assert main(["demo", "-q", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "GAATTC" in out and "10 hits" in out and "GB/s" in out
    assert "FM-index" in out and "GAATTC          10 hits" in out and "(find agrees: 10)" in out
    assert "Smith-Waterman" in out and "score 98" in out and "CIGAR 20M3D37M" in out and "(300)" in out
    assert "Read mapping" in out and "19,013 mapped, 19,012 where they were cut" in out and "RG:Z:demo" in out


def test_output_to_a_fifo_is_written_not_replaced(capsysbinary, files, tmp_path):
    """-o onto something that is not a regular file (a FIFO here, /dev/null in practice) writes
    into it; renaming a temp file over it would destroy the device or pipe."""
    import stat
    import threading

    a, _ = files
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    code, _, _ = run(capsysbinary, "-o", str(fifo), "abc", str(a))
    reader.join(timeout=30)
    assert code == 0 and got == [f"{a}\t0\n{a}\t3\n{a}\t9\n".encode()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_output_through_a_symlink_keeps_the_link(capsysbinary, files, tmp_path):
    a, _ = files
    real = tmp_path / "real.tsv"
    real.write_text("old\n")
    link = tmp_path / "link.tsv"
    link.symlink_to(real)
    code, _, _ = run(capsysbinary, "-o", str(link), "abc", str(a))
    assert code == 0 and link.is_symlink() and real.read_text() == f"{a}\t0\n{a}\t3\n{a}\t9\n"


def test_each_command_is_defined_where_the_command_table_says():
    """cli.COMMANDS lets a command line import its own module only: each entry must define its
    command (with a run function), and a module must define no command the table lacks (it would
    be unreachable: `seqsift NEW` builds the listing parser, which knows only the table)."""
    import argparse
    import importlib

    from seqsift.cli import COMMANDS, build_parser
    from seqsift.options import common_options

    def commands(parser):
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return action.choices

    assert set(commands(build_parser())) == set(COMMANDS)
    for command, (module, _) in COMMANDS.items():
        parsers = commands(build_parser(command))
        assert command in parsers and callable(parsers[command].get_default("run"))
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).add_parser(sub, common_options())
        assert set(sub.choices) <= set(COMMANDS)


def test_the_package_names_its_functions_not_its_subpackages(monkeypatch):
    """`seqsift.find` and `seqsift.scan` are functions, even once their subpackages are imported;
    a value assigned to a public name (as monkeypatch does) is kept."""
    import seqsift
    import seqsift.find.api
    import seqsift.scan.api

    assert callable(seqsift.find) and callable(seqsift.scan) and seqsift.find.__name__ == "find"
    assert {"FMIndex", "align", "find", "scan"} <= set(dir(seqsift))
    monkeypatch.setattr(seqsift, "find", len)
    assert seqsift.find is len
    monkeypatch.undo()
    assert seqsift.find is sys.modules["seqsift.find.api"].find


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts the process's threads in Linux's /proc")
def test_a_command_starts_no_blas_threads(files):
    """numpy's OpenBLAS would start a spinning thread per extra core (cli._no_blas_threads); a
    user's own setting is kept."""
    script = ("import os, sys, seqsift.cli; seqsift.cli.main(sys.argv[1:]); "
              "print(len(os.listdir('/proc/self/task')), os.environ['OPENBLAS_NUM_THREADS'])")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    argv = [sys.executable, "-c", script, "find", "-q", "-t", "1", "abc", str(files[0])]
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert r.stdout.splitlines()[-1] == "1 1", r.stderr
    r = subprocess.run(argv, env={**env, "OPENBLAS_NUM_THREADS": "3"}, capture_output=True, text=True)
    assert r.stdout.splitlines()[-1].split()[1] == "3", r.stderr


@pytest.mark.parametrize("command", ["find", "scan", "search", "align", "index"])
def test_a_bad_option_prints_the_subcommands_usage(capsys, command):
    required = ["--db", "sigs.ndb"] if command == "scan" else []
    assert main([command, *required, "--no-such-option", "a", "b"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: seqsift {command} ")
    assert f"seqsift {command}: error: unrecognized arguments: --no-such-option" in err


@pytest.mark.parametrize("text, size", [("4096", 4096), ("64M", 64 << 20), ("1G", 1 << 30), ("2kib", 2048),
                                        ("1.71G", int(1.71 * 2**30)), ("0.5K", 512), (".5M", 1 << 19),
                                        ("1.5", 1), ("3.G", 3 << 30)])
def test_sizes_take_whole_numbers_and_fractions(text, size):
    from seqsift.options import parse_size

    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["0", "0.4", "", "G", "1.2.3G", "-1M", "1X", "1e9"])
def test_a_size_below_a_byte_or_unreadable_is_refused(text):
    from seqsift.options import parse_size

    with pytest.raises(argparse.ArgumentTypeError, match="is not a size"):
        parse_size(text)
