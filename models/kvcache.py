"""KV-cache offload on a serving node: each tier's ceiling for a block size and a request rate, the tier that binds,
what each holds; and which tier can have given a measured figure (a "storage" rate above every storage tier's came
from memory).

A request stores (writes) or fetches (reads) one KV block. A tier moves blocks at its rate over the block size;
blocks that do not fit the faster tiers spill down, so the tier that binds is the slowest one the working set
reaches (every tier, where no working set is given). Rates are per serving node: a tier's members together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from probes.core.units import Q_
from probes.core.workload import Operation, Workload
from models.ceiling import format_span
from topologies.described.kvcache import KVTier
from topologies.topology import Kind

if TYPE_CHECKING:
    from pint import Quantity

    from topologies.topology import Topology

__all__ = ["MODELS", "token_bytes", "TierRate", "TierCeiling", "KVPrediction", "tier_rates", "predict_kv", "Served",
           "served_by"]

# Bytes of KV-cache per token of the models MLPerf Storage v3.0's kv-cache.py offers (its MODEL_CONFIGS, in
# kv_cache_benchmark/kv_cache/models.py: layers x KV heads x head dimension (hidden / heads, or kv_dim_per_head)
# x 2 (key and value) x 2 bytes of float16); its deepseek-v3 compresses its KV-cache (MLA) and is left out.
MODELS = {"tiny-1b": (12, 4, 128), "mistral-7b": (32, 8, 128), "llama2-7b": (32, 32, 128), "llama3.1-8b": (32, 8, 128),
          "llama3.1-70b-instruct": (80, 8, 128), "qwen3-32b": (64, 8, 128), "gpt-oss-120b": (36, 8, 64),
          "gpt-oss-20b": (24, 8, 64)}


def token_bytes(model: str) -> Quantity:
    """The KV-cache one token of ``model`` (a kv-cache.py model name) takes; KeyError naming the models if unknown."""
    if model not in MODELS:
        raise KeyError(f"no KV-cache model {model!r}; kv-cache.py's are: {', '.join(MODELS)}")
    layers, heads, dimension = MODELS[model]
    return Q_(layers * heads * dimension * 2 * 2, "B")


@dataclass(frozen=True)
class TierRate:
    """What one tier of a serving node moves for an operation, its members together: (least, most), and in words
    where the figure comes from (its members' rate where there are several, and its source); ``stated`` if it rests
    on no assumption (a data sheet, a measurement, physics)."""

    tier: KVTier
    least: Quantity
    most: Quantity
    said: str
    stated: bool

    def span(self) -> str:
        return format_span(self.least, self.most)


def tier_rates(topology: Topology, operation: Operation, block: Quantity | None) -> tuple[TierRate, ...]:
    """Every KV-cache tier's rate for ``operation`` in requests of ``block``, in the topology's order; a shared tier
    that states none is the topology's storage as the model solves it for one node of its first client group (left
    out where ``block`` is None: a figure that states no request size)."""
    rates = []
    for tier in topology.kv_cache:
        capacity = tier.rate(operation.value)
        if capacity is None:
            if block is not None:  # the model needs the size of a request
                rates.append(_shared(topology, tier, operation, block))
            continue
        least, most = (end * tier.count for end in capacity.ends)
        said = f"{tier.count} x {capacity.span()}, {capacity.source}" if tier.count > 1 else str(capacity.source)
        rates.append(TierRate(tier, least, most, said, not capacity.assumed))
    return tuple(rates)


def _shared(topology: Topology, tier: KVTier, operation: Operation, block: Quantity) -> TierRate:
    from models.predict import Model  # only a shared tier without a rate solves the topology

    client = topology.of_kind(Kind.CLIENT)[0].name
    ceiling = Model(topology).ceiling(Workload(operation, block, nodes=1), (client,))
    said = (f"the topology's storage for one node of {client}: {ceiling.shown}, bound by "
            f"{', '.join(ceiling.binding_layers)}")
    return TierRate(tier, ceiling.least, ceiling.value, said, not ceiling.assumed)


@dataclass(frozen=True)
class TierCeiling:
    """One tier's ceiling for the blocks: its rate, blocks and tokens per second at each end, what it holds in bytes,
    whole blocks and tokens (None where its size, or the bytes of a token, are unstated), whether the working set
    reaches it, and whether it keeps up with the requests."""

    rate: TierRate
    blocks: tuple[Quantity, Quantity]
    tokens: tuple[float, float] | None
    holds: Quantity | None
    holds_blocks: int | None
    holds_tokens: int | None
    reached: bool
    keeps_up: str  # "yes", "no", or "only if" its range is high enough


@dataclass(frozen=True)
class KVPrediction:
    """The KV-cache question: ``requests`` per second of ``block`` each (``demand`` in all), every tier's ceiling,
    and the tier that binds (the slowest the working set reaches)."""

    operation: Operation
    block: Quantity
    requests: Quantity
    token_bytes: Quantity | None
    working_set: Quantity | None
    demand: Quantity
    tiers: tuple[TierCeiling, ...]
    binding: TierCeiling


def predict_kv(topology: Topology, block: Quantity, requests: Quantity, operation: Operation = Operation.WRITE, *,
               token_size: Quantity | None = None, working_set: Quantity | None = None) -> KVPrediction:
    """Each tier's ceiling for ``requests`` (op/s) of ``block`` and the tier that binds.

    Raises
    ------
    ValueError
        If the topology states no KV-cache tiers.
    """
    if not topology.kv_cache:
        raise ValueError(f"{topology.path} states no KV-cache tiers: add [kv_cache.NAME] tables with tier, size and "
                         "bandwidth (see topologies/described/kvcache.py)")
    demand = (requests * block / Q_(1, "op")).to("B/s")
    ceilings, held = [], Q_(0, "B")
    for rate in tier_rates(topology, operation, block):
        reached = working_set is None or held < working_set
        size = rate.tier.size
        holds = None if size is None or size.value is None else size.value * rate.tier.count
        held = held + holds if holds is not None else Q_(float("inf"), "B")
        blocks = tuple((end / block * Q_(1, "op")).to("op/s") for end in (rate.least, rate.most))
        tokens = tuple((end / token_size).to("1/s").magnitude for end in (rate.least, rate.most)) if token_size else None
        keeps = "yes" if demand <= rate.least else "only if" if demand <= rate.most else "no"
        fits = None if holds is None else int((holds / block).to("").magnitude)
        fits_tokens = None if holds is None or token_size is None else int((holds / token_size).to("").magnitude)
        ceilings.append(TierCeiling(rate, blocks, tokens, holds, fits, fits_tokens, reached, keeps))
    binding = min((c for c in ceilings if c.reached), key=lambda c: (c.rate.most, c.rate.least))
    return KVPrediction(operation, block, requests, token_size, working_set, demand, tuple(ceilings), binding)


@dataclass(frozen=True)
class Served:
    """Which tier can have given a measured rate: the fastest storage tier's rate (None where the topology states no
    storage tier), the memory tier that explains the figure (the slowest memory tier whose most reaches it; None where
    none does), and ``beyond``: "stated" (above a stated storage rate, or physics), "range" (above the greatest of a
    storage rate known only as a range), "implied" (within the range: storage gives it only from ``measured`` up)."""

    measured: Quantity
    storage: TierRate | None
    memory: TierRate | None
    beyond: str | None


def served_by(topology: Topology, measured: Quantity, operation: Operation, block: Quantity | None,
              tolerance: float) -> Served:
    """Whether a "storage" figure of the KV-cache is above what the topology's storage tiers give (beyond
    ``tolerance``, the measurements' noise), and then which memory tier's rate explains it."""
    rates = tier_rates(topology, operation, block)
    storage = max((r for r in rates if not r.tier.tier.is_memory), key=lambda r: (r.most, r.least), default=None)
    memory = sorted((r for r in rates if r.tier.tier.is_memory and r.most >= measured), key=lambda r: r.most)
    beyond = None
    if storage is not None and measured > storage.least * (1 + tolerance):
        beyond = "implied" if measured <= storage.most * (1 + tolerance) else "stated" if storage.stated else "range"
    return Served(measured, storage, memory[0] if memory else None, beyond)
