import zlib
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TINY = Path(__file__).resolve().parent / "data"


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    return request.param


@pytest.fixture
def rng(request):
    """Seeded from the test's name, so every failure reproduces."""
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def shared_file(name: str) -> Path:
    path = DATA / name
    if not path.exists():
        pytest.fail(f"{path} is missing: the tests need ../shared/data beside the checkout")
    return path
