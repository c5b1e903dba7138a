"""Where a rank's neighbours are: itself, on its node, or on another node.

checkmpi-halo builds its grid with MPI_Cart_create(periodic, reorder=0)
(src/core/decomposition.cpp): rank r has row-major coordinates, the last
dimension fastest, and a launcher that fills nodes in order puts ranks
[k * rpn, (k + 1) * rpn) on node k.
"""

from __future__ import annotations

import math

from checkmpi.grid import Triple

SIGNS = (+1, -1)  # to the neighbour above, to the one below (checkmpi-halo's Up, Down)


def coords(rank: int, dims: Triple) -> Triple:
    x, rest = divmod(rank, dims[1] * dims[2])
    y, z = divmod(rest, dims[2])
    return x, y, z


def rank_of(c: Triple, dims: Triple) -> int:
    return (c[0] * dims[1] + c[1]) * dims[2] + c[2]


def neighbour(rank: int, dims: Triple, d: int, sign: int) -> int:
    c = list(coords(rank, dims))
    c[d] = (c[d] + sign) % dims[d]
    return rank_of((c[0], c[1], c[2]), dims)


def link_kinds(rank: int, dims: Triple, ranks_per_node: int) -> dict[tuple[int, int], str]:
    """(direction, sign) -> 'self', 'intra' or 'inter' for the messages `rank` sends."""
    out = {}
    for d in range(3):
        for sign in SIGNS:
            peer = neighbour(rank, dims, d, sign)
            out[(d, sign)] = ("self" if peer == rank else
                              "intra" if peer // ranks_per_node == rank // ranks_per_node else "inter")
    return out


def offset_name(offset: Triple) -> str:
    """checkmpi-halo's name of an offset: its axes, then their signs ('xy+-': +x, -y)."""
    axes = [a for a in range(3) if offset[a]]
    return "".join("xyz"[a] for a in axes) + "".join("+" if offset[a] > 0 else "-" for a in axes)


# checkmpi-halo's edge and corner neighbours (stencil.cpp), each followed by its opposite.
_EDGES = [(1, 1, 0), (1, -1, 0), (1, 0, 1), (1, 0, -1), (0, 1, 1), (0, 1, -1)]
_CORNERS = [(1, 1, 1), (1, 1, -1), (1, -1, 1), (-1, 1, 1)]


def diagonal_offsets(neighbours: int) -> list[Triple]:
    """The edge (18, 26) and corner (26) neighbours of a stencil of `neighbours`."""
    half = (_EDGES if neighbours >= 18 else []) + (_CORNERS if neighbours >= 26 else [])
    out: list[Triple] = []
    for o in half:
        out += [o, (-o[0], -o[1], -o[2])]
    return out


def offset_kinds(rank: int, dims: Triple, ranks_per_node: int, neighbours: int) -> dict[Triple, str]:
    """Edge and corner offset -> 'self', 'intra' or 'inter' for the messages `rank` sends to them."""
    here = coords(rank, dims)
    out = {}
    for o in diagonal_offsets(neighbours):
        peer = rank_of((int((here[0] + o[0]) % dims[0]), int((here[1] + o[1]) % dims[1]),
                        int((here[2] + o[2]) % dims[2])), dims)
        out[o] = "self" if peer == rank else "intra" if peer // ranks_per_node == rank // ranks_per_node else "inter"
    return out


def busiest(dims: Triple, ranks_per_node: int) -> tuple[int, dict[tuple[int, int], str]]:
    """The rank with the most off-node neighbours (then on-node ones), first
    in rank order, and its link kinds: the rank a step waits for."""
    best = None
    for rank in range(math.prod(dims)):
        kinds = link_kinds(rank, dims, ranks_per_node)
        key = (sum(k == "inter" for k in kinds.values()), sum(k == "intra" for k in kinds.values()))
        if best is None or key > best[0]:
            best = (key, rank, kinds)
        if key[0] == 6 - sum(k == "self" for k in kinds.values()):  # every neighbour off node: none is busier
            break
    assert best is not None
    return best[1], best[2]


def counts(kinds: dict[tuple[int, int], str]) -> dict[str, int]:
    """How many of the six messages go to each kind of link."""
    return {k: sum(v == k for v in kinds.values()) for k in ("self", "intra", "inter")}
