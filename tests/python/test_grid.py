"""`2x2x2` parsing (checkmpi.grid)."""

from __future__ import annotations

import pytest

from checkmpi.errors import CheckmpiError
from checkmpi.grid import parse_triple


def test_parse_triple_accepts_separators():
    assert parse_triple("2x3x4", "--procs") == (2, 3, 4)
    assert parse_triple("2X3*4", "--procs") == (2, 3, 4)


@pytest.mark.parametrize("text", ["2x2", "2x2x2x2", "axbxc", "2x0x2", "-1x2x2", ""])
def test_parse_triple_rejects(text):
    with pytest.raises(CheckmpiError, match="three positive integers"):
        parse_triple(text, "--procs")
