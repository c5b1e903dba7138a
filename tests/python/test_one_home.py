"""Facts the native tool and the Python layer both name come from one place:
the part names of compositions (parts.cpp's tables, which --list-strategies
prints) are the schemas' enums; the timer names are the halo schema's list,
which the tool's output is checked against."""

from __future__ import annotations

import subprocess

from checkmpi.results import HALO_TIMERS, _schema_texts, load
from conftest import BUILD_BIN, DATA


def listed_parts() -> dict[str, list[str]]:
    """The keys and values the tool's --list-strategies prints under 'Compose your own'."""
    text = subprocess.run([str(BUILD_BIN / "checkmpi-halo"), "--list-strategies"], capture_output=True, text=True,
                          timeout=60, check=True).stdout
    parts: dict[str, list[str]] = {}
    key = ""
    for line in text.split("keys and values:\n", 1)[1].splitlines():
        words = line.split("(")[0].split()
        if not words:
            continue
        if not line.startswith(" " * 14):
            key, words = words[0], words[1:]
        parts.setdefault(key, []).extend(words)
    return parts


def test_part_names_are_the_schema_enums(halo_bin):
    row = _schema_texts()["checkmpi.catalog-2.schema.json"]["$defs"]["row"]["properties"]["parts"]
    schema = {key: value["enum"] for key, value in row["properties"].items()}
    assert listed_parts() == schema
    assert row["required"] == list(schema)


def test_timer_names_are_the_schema_list():
    assert HALO_TIMERS[:4] == ("loop", "compute", "diag", "comm") and len(HALO_TIMERS) == 18
    assert HALO_TIMERS[-2:] == ("post", "wait")
    run = load(DATA / "halo_all_steps.json")
    assert all(tuple(s.timers) == HALO_TIMERS for s in run.ran())
