"""Start-up: `seqsift --version`, `--help` and `SUBCOMMAND --help` import no engine, no Numba and
no numpy (cli.py lists the commands without importing their modules; each command module imports
its engine when it runs). Checked in a fresh process, so an eager import added anywhere on the
way fails here."""

import json
import subprocess
import sys

import pytest

from seqsift.cli import COMMANDS

HEAVY = ("numba", "numpy", "llvmlite", "isal", "dask", "distributed")
# The modules a parser may need: the package, the CLI, the bottom layer (options.py and what it
# imports) and, for a subcommand, its own module and its package (which holds the defaults shown).
BOTTOM = {"seqsift", "seqsift.cli", "seqsift.options", "seqsift.backend", "seqsift.errors", "seqsift.lazy"}
# Commands whose module is the engine itself (their parser and their code share one file), so
# their --help still imports it: `simulate`, `check` and `stats` in fmindex/.
ENGINE_MODULES = {"simulate", "check", "stats"}
# Modules of parameters a parser shows the defaults of, which import only the standard library.
PARAMETERS = {"map": {"seqsift.map.scoring"}}
# Helpers of the standard library alone that a package's __init__ may use (its lazy names).
LIGHT = {"seqsift.lazy"}

SCRIPT = """
import contextlib, io, json, sys
from seqsift import cli
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = cli.main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def loaded(*argv: str) -> tuple[int, str, list[str]]:
    """(exit status, standard output, every module imported) of `seqsift ARGV` in a new process."""
    run = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    return result["code"], result["out"], result["modules"]


def heavy(modules: list[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []], ids=["version", "help", "nothing"])
def test_version_and_help_import_no_command_module(argv):
    code, out, modules = loaded(*argv)
    assert code == (2 if not argv else 0)
    assert heavy(modules) == []
    assert {m for m in modules if m.startswith("seqsift")} == BOTTOM
    if argv == ["--help"]:  # every command listed, with its line (argparse wraps it)
        words = " ".join(out.split())
        assert all(f"{name} {summary}" in words for name, (_, summary) in COMMANDS.items())


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - ENGINE_MODULES))
def test_a_commands_help_imports_no_engine(command):
    code, out, modules = loaded(command, "--help")
    assert code == 0 and f"usage: seqsift {command}" in out
    assert heavy(modules) == []
    module = COMMANDS[command][0]
    allowed = BOTTOM | LIGHT | {module, module.rpartition(".")[0]} | PARAMETERS.get(command, set())
    assert {m for m in modules if m.startswith("seqsift")} <= allowed


def test_the_check_sees_an_eager_import():
    """The control: a command that runs imports its engine (and numpy) in the same harness."""
    _, _, modules = loaded("align", "--dna", "/dev/null", "/dev/null")
    assert "numpy" in heavy(modules) and "seqsift.alignment.stream" in modules


def test_help_is_argparse_own_at_any_width(monkeypatch):
    """options.sized gives argparse's formatter the width it would get from shutil (not imported
    for that alone): every command's help, wrapped to $COLUMNS, is argparse's own."""
    from seqsift import cli, options

    texts = {}
    for columns in ("40", "100"):
        for command in COMMANDS:
            monkeypatch.setenv("COLUMNS", columns)
            ours = cli.build_parser(command).commands[command].format_help()
            with monkeypatch.context() as plain_argparse:
                plain_argparse.setattr(options, "sized", lambda formatter: formatter)
                plain = cli.build_parser(command).commands[command].format_help()
            assert ours == plain, (columns, command)
            texts[columns, command] = ours
    assert all(texts["40", command] != texts["100", command] for command in COMMANDS)  # the width was taken
