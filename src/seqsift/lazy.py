"""Names a module lends from other modules, loaded on first use (PEP 562).

A package's `__init__` (or a module such as distributed.py) names what its users import from it,
but importing it must not import the engines, Numba or numpy behind those names: `seqsift
--help`, `align --help` and `find` over files start without them (docs/benchmarks.md,
"Start-up"). Each such module gets its `__getattr__` and `__dir__` from `lend`."""

import importlib
import sys


def lend(module: str, homes: dict[str, str]):
    """The module-level `__getattr__` and `__dir__` for `module`: each name of `homes` (name ->
    the absolute name of the module defining it) is imported from its home when first asked."""

    def __getattr__(name: str):
        if name in homes:
            return getattr(importlib.import_module(homes[name]), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(sys.modules[module])) | set(homes))

    return __getattr__, __dir__
