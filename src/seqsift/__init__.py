"""seqsift: find patterns in large data fast, on CPUs, NVIDIA GPUs and Dask clusters.

Importing this package never touches CUDA; GPU code is imported only when a cuda backend is
asked for. The public names load their engine on first use, so a command imports only what it
runs (Numba alone costs ~0.5 s, which `seqsift search` no longer pays: precompiled.py).
"""

import importlib
import sys
import types

__version__ = "0.1.0"

_PUBLIC = {
    "Alignment": "seqsift.alignment.pairwise",
    "BackendUnavailable": "seqsift.errors",
    "FMIndex": "seqsift.fmindex.api",
    "FormatError": "seqsift.errors",
    "InputError": "seqsift.errors",
    "RecordHits": "seqsift.find.api",
    "SeqsiftError": "seqsift.errors",
    "align": "seqsift.alignment.pairwise",
    "find": "seqsift.find.api",
    "find_count": "seqsift.find.api",
    "find_records": "seqsift.find.api",
    "map_reads": "seqsift.map.api",
    "scan": "seqsift.scan.api",
}
__all__ = ["__version__", *_PUBLIC]


def _public(name: str) -> property:
    """The name's value from its module. A property, not a module attribute: `find` and `scan`
    also name subpackages, and importing one binds it on this package, which must not replace
    the function (the setter drops subpackages and keeps anything else assigned)."""

    def get(package):
        if name in package.__dict__.get("_assigned", {}):
            return package._assigned[name]
        return getattr(importlib.import_module(_PUBLIC[name]), name)

    def set_(package, value):
        if not (isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}"):
            package.__dict__.setdefault("_assigned", {})[name] = value

    return property(get, set_)


class _Package(types.ModuleType):
    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_PUBLIC))


for _name in _PUBLIC:
    setattr(_Package, _name, _public(_name))
sys.modules[__name__].__class__ = _Package
