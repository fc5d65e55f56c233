"""seqsift's layers, checked on the source: every arrow points down. From the top: cli.py (and the
console entry), the subcommand modules (`*/command.py`, `fmindex/commands.py`, demo, the Lab),
the engines (find, scan, fmindex, alignment, map), then io/, runner.py and distributed.py, and
the bottom (options, progress, errors, backend, precompiled with objload, intrinsics, lazy).

Every module under src/seqsift is parsed with ast; an import counts wherever it is written (at
module level or inside a function, where the engines defer their heavy ones), relative imports
resolved. `from package import name` counts as importing package.name when that is a module,
else the package itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ENGINES = ("seqsift.find", "seqsift.scan", "seqsift.fmindex", "seqsift.alignment", "seqsift.map")
CLI_USERS = ("seqsift.__main__",)  # the console entry; everything else sits below cli.py


def module_names(src: Path) -> dict[str, Path]:
    """Dotted module name -> file, packages named by their __init__.py."""
    names = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imports_of(name: str, tree: ast.AST, modules: set[str], is_package: bool) -> set[str]:
    """The seqsift modules `name` imports anywhere in its source."""
    found = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a name inside a module
                target = target.rpartition(".")[0]
            if target and target.startswith("seqsift") and target != name:
                found.add(target)
    return found


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    files = module_names(src)
    return {name: imports_of(name, ast.parse(path.read_text(), str(path)), set(files), path.name == "__init__.py")
            for name, path in files.items()}


def inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan), each a cycle or several.
    A package's own __init__ importing its submodules is not an arrow back: the edge from a
    submodule up to its package's __init__ is what would close the loop, and it is reported."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def is_command(name: str) -> bool:
    return name.rpartition(".")[2] in ("command", "commands")


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Arrows pointing up: anything but the console entry importing the CLI (the engines, io,
    the Lab's experiment, distributed among them); anything but the CLI or another subcommand
    importing a subcommand module; distributed or io importing an engine."""
    bad = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if inside(target, "seqsift.cli") and module not in CLI_USERS:
                bad.append(f"{module} imports {target}: the CLI is the top (use seqsift.options)")
            if is_command(target) and not (is_command(module) or inside(module, "seqsift.cli")):
                bad.append(f"{module} imports {target}: subcommand modules sit above the engines")
            for lower in ("seqsift.distributed", "seqsift.io"):
                if inside(module, lower) and any(inside(target, e) for e in ENGINES):
                    bad.append(f"{module} imports {target}: {lower} sits below the engines")
    return bad


# -- the checker itself can fail --------------------------------------------------------------------
def test_checker_finds_a_two_module_cycle_and_a_longer_one():
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert cycles(graph) == [["a", "b"], ["c", "d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_checker_finds_arrows_pointing_up():
    graph = {"seqsift.find.command": {"seqsift.cli"}, "seqsift.distributed": {"seqsift.scan.cluster"},
             "seqsift.cli": {"seqsift.find.command"}, "seqsift.runner": {"seqsift.distributed"},
             "seqsift.io.fastx": {"seqsift.cli"}, "seqsift.__main__": {"seqsift.cli"},
             "seqsift.alignment.cluster": {"seqsift.alignment.command"}, "seqsift.io.reads": {"seqsift.fmindex.api"}}
    assert len(layer_violations(graph)) == 5


def test_checker_reads_imports_in_functions_and_relative_ones(tmp_path):
    package = tmp_path / "seqsift"
    (package / "find").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "cli.py").write_text("EXIT = 2\n")
    (package / "distributed.py").write_text("def f():\n    from seqsift.find import api\n")
    (package / "find" / "__init__.py").write_text("")
    (package / "find" / "api.py").write_text("from .. import cli\nfrom . import command\n")
    (package / "find" / "command.py").write_text("def run():\n    import seqsift.find.api\n")
    graph = import_graph(tmp_path)
    assert graph["seqsift.distributed"] == {"seqsift.find.api"}
    assert graph["seqsift.find.api"] == {"seqsift.cli", "seqsift.find.command"}
    assert cycles(graph) == [["seqsift.find.api", "seqsift.find.command"]]
    assert len(layer_violations(graph)) == 3  # the CLI, a subcommand module, an engine from distributed


# -- the tree ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_graph_sees_the_tree(graph):
    assert "seqsift.find.api" in graph["seqsift.find.command"]
    assert "seqsift.runner" in graph["seqsift.find.cpu"]


def test_no_arrow_points_up(graph):
    assert layer_violations(graph) == []


def test_no_import_cycles(graph):
    assert cycles(graph) == []


def test_bottom_modules_import_nothing_above_them(graph):
    bottom = {"seqsift.options", "seqsift.progress", "seqsift.errors", "seqsift.backend", "seqsift.precompiled",
              "seqsift.objload", "seqsift.filestatus", "seqsift.intrinsics", "seqsift.lazy", "seqsift.runner", "seqsift.distributed"}
    for module in bottom:
        assert graph[module] <= bottom, (module, graph[module] - bottom)
