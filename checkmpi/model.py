"""Predicted halo-exchange time per step from point-to-point parameters.

The model is documented in docs/model.md; keep the two in step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from checkmpi.errors import CheckmpiError
from checkmpi.grid import Triple
from checkmpi.results import HaloRun, P2PRun, opt_float

# Bytes read + written per second assumed for packing, unpacking and the
# shift when no measured figure is given (docs/model.md, "Copy bandwidth").
DEFAULT_COPY_BANDWIDTH = 10e9


@dataclass(frozen=True)
class StrategyInfo:
    id: str
    alias: str
    number: int


STRATEGIES = tuple(StrategyInfo(f"step{i}", alias, i) for i, alias in enumerate((
    "sendrecv-dtype", "sendrecv-packx", "sendrecv-pack", "kernel-pack", "kernel-pack-aware", "isend-recv-x",
    "isend-recv", "isend-irecv", "overlap", "overlap-async", "overlap-masked")))


def select_strategies(spec: str) -> list[StrategyInfo]:
    """'all' or comma-separated ids, aliases or numbers, as checkmpi-halo --strategy."""
    if spec.strip() == "all":
        return list(STRATEGIES)
    chosen: list[StrategyInfo] = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        match = [s for s in STRATEGIES if item in (s.id, s.alias, str(s.number))]
        if not match:
            raise CheckmpiError(f"unknown strategy '{item}' (ids step0..step10, their aliases or numbers, or 'all')")
        if match[0] not in chosen:
            chosen.append(match[0])
    if not chosen:
        raise CheckmpiError("--strategy names no strategy")
    return chosen


@dataclass(frozen=True)
class Segment:
    min_size: float
    max_size: float
    alpha: float  # s
    beta: float  # bytes/s


@dataclass
class MessageModel:
    """T(s) = latency(s) + s * per_byte(s) for one message; datatype extra o + O*s."""

    kind: str  # "hockney" or "loggp"
    source: str
    segments: list[Segment]
    loggp: dict[str, float]
    datatype_o: float = 0.0
    datatype_O: float = 0.0
    datatype_source: str = ""

    def _segment(self, size: float) -> Segment:
        # The last segment starting at or below `size`; the first one below all.
        chosen = self.segments[0]
        for seg in self.segments:
            if seg.min_size <= size:
                chosen = seg
        return chosen

    def latency(self, size: float) -> float:
        if self.kind == "hockney":
            return self._segment(size).alpha
        p = self.loggp
        return p["L"] + p["o_s"] + p["o_r"]

    def per_byte(self, size: float) -> float:
        return 1.0 / self._segment(size).beta if self.kind == "hockney" else self.loggp["G"]

    def time(self, size: float) -> float:
        return self.latency(size) + size * self.per_byte(size)


def message_model(p2ps: list[P2PRun]) -> MessageModel:
    """The model from the first ping-pong (Hockney) or LogGP fit, plus any datatype fit."""
    model: MessageModel | None = None
    for run in p2ps:
        hockney = run.fits.get("hockney") or {}
        if model is None and run.mode == "pingpong" and hockney.get("segments"):
            segments = [Segment(float(s["min_size"]), float(s["max_size"]), float(s["alpha"]), opt_float(s["beta"]))
                        for s in hockney["segments"]]
            if any(not s.beta > 0 or s.alpha < 0 for s in segments):  # a null beta: times did not grow with size
                raise CheckmpiError(f"'{run.path}': Hockney fit has alpha < 0 or no positive beta; cannot predict")
            model = MessageModel("hockney", str(run.path), sorted(segments, key=lambda s: s.min_size), {})
    for run in p2ps:
        loggp = run.fits.get("loggp")
        if model is None and run.mode == "loggp" and loggp:
            try:
                params = {k: float(loggp[k]) for k in ("L", "o_s", "o_r", "g", "G")}
            except (KeyError, TypeError, ValueError):
                raise CheckmpiError(f"'{run.path}': LogGP fit lacks one of L, o_s, o_r, g, G") from None
            model = MessageModel("loggp", str(run.path), [], params)
    if model is None:
        names = ", ".join(f"{r.path} ({r.mode})" for r in p2ps) or "none"
        raise CheckmpiError(f"prediction needs a ping-pong result with a Hockney fit or a LogGP result; got {names}")
    for run in p2ps:
        fit = run.fits.get("datatype")
        if run.mode == "datatype" and fit:
            if fit.get("O") is None:  # too few payload sizes to fit: no overhead known
                continue
            model.datatype_O = float(fit["O"])
            model.datatype_o = float(fit.get("o") or 0.0)
            model.datatype_source = str(run.path)
            break
    return model


@dataclass
class Prediction:
    strategy: StrategyInfo
    messages: int  # messages one rank sends per step
    bytes: int  # payload one rank sends per step
    mpi: float  # message, datatype and barrier time per step (s)
    pack: float
    unpack: float
    compute: float
    hidden: float  # part of `mpi` overlapped by computation

    @property
    def exchange(self) -> float:
        """What checkmpi-halo's comm timer covers: pack, MPI calls, unpack."""
        return self.pack + self.mpi + self.unpack

    @property
    def total(self) -> float:
        return self.exchange + self.compute - self.hidden


@dataclass(frozen=True)
class Case:
    procs: Triple
    local: Triple
    precision: str = "single"
    sync: str = "barrier"
    border: int = 10


def planes(local: Triple) -> Triple:
    """Elements of one halo plane per direction, halo rows included."""
    l, m, n = local
    return (m + 2) * (n + 2), (l + 2) * (n + 2), (l + 2) * (m + 2)


def predict(case: Case, strategies: list[StrategyInfo], model: MessageModel,
            copy_bandwidth: float = DEFAULT_COPY_BANDWIDTH) -> list[Prediction]:
    return [_predict_one(case, s, model, copy_bandwidth) for s in strategies]


def _predict_one(case: Case, s: StrategyInfo, model: MessageModel, bw: float) -> Prediction:
    real = 8 if case.precision == "double" else 4
    nprocs = math.prod(case.procs)
    plane_bytes = [p * real for p in planes(case.local)]

    def copy(nbytes: float) -> float:  # read + write at the copy bandwidth
        return 2.0 * nbytes / bw

    # Messages per direction and sign: (bytes, packed by hand, contiguous).
    per_dir: list[list[tuple[int, bool, bool]]] = []
    for d in range(3):
        if s.number == 0:
            per_dir.append([(plane_bytes[d], False, d == 2)] * 3)
        elif s.number == 1:
            per_dir.append([(plane_bytes[d], d == 0, d != 1)] * 3)
        else:
            per_dir.append([(3 * plane_bytes[d], True, True)])

    messages = 2 * sum(len(msgs) for msgs in per_dir)
    sent = 2 * sum(b for msgs in per_dir for b, _, _ in msgs)
    pack = 2 * sum(copy(b) for msgs in per_dir for b, packed, _ in msgs if packed)  # both signs
    unpack = pack

    def extra(b: int, contiguous: bool) -> float:
        # MPI's datatype engine gathers and scatters like a hand pack and
        # unpack would, plus the measured datatype overhead o + O*b.
        return 0.0 if contiguous else 2 * copy(b) + model.datatype_o + model.datatype_O * b

    def transfer(b: int, d: int) -> float:
        # A rank that is its own neighbour exchanges through MPI's self path: a copy.
        return copy(b) if case.procs[d] == 1 else model.time(b)

    barrier = math.ceil(math.log2(nprocs)) * model.time(0) if nprocs > 1 else 0.0
    syncs = case.sync == "barrier"
    if s.number <= 6:  # one direction after the other, a barrier after each
        mpi = sum(2 * (transfer(b, d) + extra(b, c)) for d, msgs in enumerate(per_dir) for b, _, c in msgs)
        mpi += 3 * barrier if syncs else 0.0
    else:  # all six messages in flight at once: latencies overlap, bytes share the link
        remote = [(b, d) for d, msgs in enumerate(per_dir) for b, _, _ in msgs if case.procs[d] > 1]
        mpi = (max((model.latency(b) for b, _ in remote), default=0.0)
               + 2 * sum(b * model.per_byte(b) for b, _ in remote)
               + 2 * sum(copy(b) for d, msgs in enumerate(per_dir) for b, _, _ in msgs if case.procs[d] == 1))
        mpi += barrier if syncs else 0.0

    cells = math.prod(case.local)
    one_pass = copy(3 * cells * real)  # read + write every interior cell of three fields
    hidden = 0.0
    if s.number <= 2 or s.number == 10:
        compute = one_pass  # in place (0-2) or into the second buffer (10)
    else:
        compute = 2 * one_pass  # copy into temporaries, then shift back
    if s.number in (8, 9):
        hidden = min(mpi, one_pass)  # the copy into temporaries runs while messages fly
    elif s.number == 10:
        inner = math.prod(max(0, n - 2 * case.border) for n in case.local)
        hidden = min(mpi, one_pass * inner / cells)
    return Prediction(s, messages, sent, mpi, pack, unpack, compute, hidden)


def case_of(run: HaloRun) -> Case:
    return Case(run.dims, run.local, run.precision, str(run.config.get("sync", "barrier")),
                int(run.config.get("border", 10)))


def copy_bandwidth_for(run: HaloRun | None, given: float | None) -> tuple[float, str]:
    """The copy bandwidth to use and where it came from: flag, the run's probe, default."""
    if given is not None:
        return given, "--copy-bandwidth"
    if run is not None and run.memcpy_bandwidth is not None and run.memcpy_bandwidth.mean > 0:
        return run.memcpy_bandwidth.mean, f"memcpy probe in {run.path.name}"
    return DEFAULT_COPY_BANDWIDTH, "default"
