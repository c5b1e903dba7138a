"""The Python side's readers of user input, fuzzed (the native tools' are
libFuzzer targets in tests/fuzz): the results loader behind report, export
and predict, and the campaign spec parser. Each gets the real tools' files
mutated at random (seeded: a failure names its seed and is repeatable):
bytes flipped, cut or repeated, values replaced by values of other types,
NaN, infinities, huge numbers, control characters, deep nesting. Whatever
the input, a reader returns or raises CheckmpiError (one line, exit 2):
never another exception."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import DATA, REPO

from checkmpi.campaign.spec import parse_spec
from checkmpi.errors import CheckmpiError
from checkmpi.results import load

CASES = 300  # per reader and seed file: about a second each
ODD = [float("nan"), float("inf"), -float("inf"), -1, 0, 2**63, -(2**63) - 1, 1e308, "", "\n#SBATCH x", "\x00",
       [], {}, None, True, "x" * 1000, [[[[[]]]]]]


def _mutate_bytes(text: str, rng: random.Random) -> str:
    b = bytearray(text.encode())
    for _ in range(rng.randint(1, 8)):
        if not b:
            break
        i = rng.randrange(len(b))
        op = rng.randrange(4)
        if op == 0:
            b[i] = rng.randrange(256)
        elif op == 1:
            del b[i:i + rng.randint(1, 64)]
        elif op == 2:
            b[i:i] = b[i:i + rng.randint(1, 64)]
        else:
            b = b[:i]
    return b.decode("utf-8", errors="replace")


def _mutate_values(doc, rng: random.Random):
    """`doc` with a few of its values, anywhere in it, replaced by odd ones."""
    paths = []

    def walk(node, path):
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + [k])
        elif isinstance(node, list):
            for k, v in enumerate(node):
                walk(v, path + [k])

    walk(doc, [])
    for _ in range(rng.randint(1, 4)):
        path = rng.choice(paths[1:])
        node = doc
        try:
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = rng.choice(ODD)
        except (KeyError, IndexError, TypeError):
            pass  # an earlier replacement removed the way there
    return doc


def _must_be_clean(read, text: str, seed: int) -> None:
    try:
        read(text)
    except CheckmpiError:
        pass
    except Exception as e:  # noqa: BLE001 - the point of the test
        pytest.fail(f"seed {seed}: {type(e).__name__}: {e}")


@pytest.mark.parametrize("name", ["halo_4ranks.json", "halo_launches.json", "p2p_pingpong.json", "p2p_nbc.json"])
def test_results_loader(name, tmp_path):
    original = (DATA / name).read_text()
    path = tmp_path / "r.json"

    def read(text: str) -> None:
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        load(path)

    for seed in range(CASES):
        rng = random.Random(seed)
        if seed % 2:
            text = _mutate_bytes(original, rng)
        else:
            text = json.dumps(_mutate_values(json.loads(original), rng))
        _must_be_clean(read, text, seed)
    for depth in (100, 10_000, 100_000):
        _must_be_clean(read, "[" * depth + "]" * depth, depth)
        _must_be_clean(read, '{"schema": "checkmpi.halo/5", "context": ' + "[" * depth + "]" * depth + "}", depth)


def test_campaign_spec_parser(tmp_path):
    original = (REPO / "examples" / "campaign-tiny.toml").read_text()
    grids = {n: [n, 1, 1] for n in range(1, 9)}
    resolved = ["step0", "step2", "step7"]

    def read(text: str) -> None:
        parse_spec(text, tmp_path / "spec.toml", bin_dir=str(tmp_path), resolved=resolved, grids=grids)

    for seed in range(CASES):
        _must_be_clean(read, _mutate_bytes(original, random.Random(seed)), seed)
    for depth in (100, 5_000, 100_000):
        _must_be_clean(read, "x = " + "[" * depth + "]" * depth, depth)
