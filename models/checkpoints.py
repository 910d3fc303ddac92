"""Checkpoints as a workload: the bytes a model's checkpoint holds, the client memory a save and a restore need, and
which part binds each, the clients' generation of the tensors, the network, the servers or the drives.

MLPerf Storage's checkpointing (DLIO) builds each rank's share of a Llama 3 model's state in memory (fp16 weights and
three fp32 optimizer groups: 2 + 3 x 4 = 14 bytes a parameter), writes it with ``torch.save``, and reads it back
with ``torch.load``, which returns a second copy while the first is still held. So a client holds its ranks' shares
while it saves, and twice that while it restores. The tensors are generated on the clients before they are
written: a save is as fast as the slower of the clients' generation and the storage's write path.

>>> MODELS["llama3-8b"].parameters
8030261248
>>> round(MODELS["llama3-8b"].size.m_as("GiB"), 2)
104.7
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from probes.core.errors import IoboundError
from probes.core.units import Q_

if TYPE_CHECKING:
    from pint import Quantity

    from models.accelerators import Checkpoint
    from models.predict import Model
    from topologies.topology import Capacity, Topology

__all__ = ["LLM", "MODELS", "GENERATION", "UnknownModelError", "llm", "Memory", "memory", "Saving", "saving",
           "generated"]

# The client capacity that says how fast a client generates (or serialises) checkpoint tensors, per client node.
GENERATION = "checkpoint_generation"
# DLIO's datatypes in MLPerf Storage's configs: model_datatype fp16, optimizer_datatype fp32.
_WEIGHT_BYTES, _OPTIMIZER_BYTES = 2, 4
_SOURCE = "mlcommons/storage configs/dlio/workload/{}.yaml @caa90c9; DLIO base_checkpointing.py @e1919d7"


class UnknownModelError(IoboundError, LookupError):
    """Raised for a model name the table does not hold; the message lists those it holds."""


@dataclass(frozen=True)
class LLM:
    """A Llama 3 model as MLPerf Storage checkpoints it: its transformer's shape, its parallelism (tensor, pipeline,
    ZeRO stage) and the ranks a closed submission runs (``ranks``)."""

    name: str
    layers: int
    hidden: int
    ffn: int
    vocab: int
    heads: int
    kv_heads: int
    tensor: int
    pipeline: int
    zero: int
    ranks: int

    @property
    def source(self) -> str:
        return _SOURCE.format(self.name.replace("-", "_"))

    @property
    def _kv(self) -> int:
        """The width of the K and V projections: a head's dimension times the KV heads (grouped-query attention)."""
        return self.hidden // self.heads * self.kv_heads

    @property
    def parameters(self) -> int:
        """DLIO's parameter count: embedding and lm_head, and per layer attention (Q, K, V, output), the gated MLP
        and two norms, and the final norm."""
        attention = self.hidden * (self.hidden + 2 * self._kv) + self.hidden ** 2  # Q, K, V; the output
        layer = 2 * self.hidden + attention + 3 * self.ffn * self.hidden
        return 2 * self.vocab * self.hidden + layer * self.layers + self.hidden

    def shares(self, ranks: int | None = None) -> tuple[int, ...]:
        """The bytes each of ``ranks`` (the closed count by default) holds and writes, as DLIO splits them.

        Weights: the layers of its pipeline stage, split over the tensor ranks, and at ZeRO stage 3 over the data
        ranks too; at stage 1 only the first data-parallel copy holds them. Optimizer: three groups of the
        parameters split over every rank, each with 5 x hidden more.
        """
        ranks = self.ranks if ranks is None else ranks
        model = self.tensor * self.pipeline
        if ranks < model or ranks % model:
            raise ValueError(f"{self.name} needs a multiple of {model} ranks (tensor x pipeline). Got {ranks} instead.")
        data = ranks // model
        optimizer = (3 * (self.parameters // ranks) + 15 * self.hidden) * _OPTIMIZER_BYTES
        weights = [self._weights(stage, data) * _WEIGHT_BYTES for stage in range(self.pipeline)]  # once a stage
        return tuple(weights[rank // self.tensor % self.pipeline] * (self.zero != 1 or rank // model == 0) + optimizer
                     for rank in range(ranks))

    def _weights(self, stage: int, data: int) -> int:
        """The parameters one rank of pipeline ``stage`` holds of the weights (DLIO's get_layer_index and
        get_layer_parameters)."""
        split = data if self.zero == 3 else 1
        sharded = (self.hidden * (self.hidden + 2 * self._kv), self.hidden ** 2, 2 * self.ffn * self.hidden,
                   self.ffn * self.hidden)  # attention Q, K, V; its output; the gated MLP's two matrices
        layer = 2 * (self.hidden // split) + sum(n // self.tensor // split for n in sharded)
        per, extra = divmod(self.layers, self.pipeline)
        first = stage * per + min(stage, extra) + 1
        last = first + per - (stage >= extra)
        if stage == 0:
            first = 0
        if stage == self.pipeline - 1:
            last = self.layers + 2
        total = 0
        for index in range(first, last + 1):
            if index in (0, self.layers + 1):
                total += self.hidden * self.vocab // self.tensor // split
            elif index == self.layers + 2:
                total += self.hidden // split
            else:
                total += layer
        return total

    @property
    def size(self) -> Quantity:
        """The whole checkpoint over the closed ranks."""
        return Q_(sum(self.shares()), "B")


# MLPerf Storage v2.0/v3.0's four checkpoint workloads (configs/dlio/workload/llama3_*.yaml) and their closed rank
# counts (mlpstorage config.py LLM_ALLOWED_VALUES: 8, 8 x 8, 8 x 32 x 2, 8 x 64 x 2).
MODELS = {m.name: m for m in (
    LLM("llama3-8b", 32, 4096, 14336, 128256, 32, 8, tensor=1, pipeline=1, zero=3, ranks=8),
    LLM("llama3-70b", 80, 8192, 28672, 128256, 128, 8, tensor=8, pipeline=1, zero=3, ranks=64),
    LLM("llama3-405b", 126, 16384, 53248, 128256, 128, 8, tensor=8, pipeline=32, zero=1, ranks=512),
    LLM("llama3-1t", 128, 25872, 98304, 128256, 192, 32, tensor=8, pipeline=64, zero=1, ranks=1024),
)}


def llm(name: str) -> LLM:
    """The model named ``name`` (``llama3-8b`` or DLIO's ``llama3_8b``, in any case).

    Raises
    ------
    UnknownModelError
        If the table has no such model.
    """
    key = str(name).strip().lower().replace("_", "-")
    if key not in MODELS:
        raise UnknownModelError(f"The checkpoint model must be one of: {', '.join(MODELS)} (or a size such as "
                                f"105GiB). Got {name!r} instead.")
    return MODELS[key]


@dataclass(frozen=True)
class Memory:
    """What the busiest client node holds of a checkpoint: its ranks' shares while saving, twice that while
    restoring; ``has`` the client's memory where the topology states it (its least, for a range)."""

    ranks_per_node: int
    save: Quantity
    restore: Quantity
    has: Quantity | None

    @property
    def fits(self) -> bool | None:
        """Whether the restore fits in the client's memory (None where the memory is not stated)."""
        return None if self.has is None else self.restore <= self.has

    @property
    def saves(self) -> bool | None:
        """Whether the save alone fits (None where the memory is not stated)."""
        return None if self.has is None else self.save <= self.has


def memory(shares: tuple[int, ...], nodes: int, has: Quantity | None = None) -> Memory:
    """The memory the busiest of ``nodes`` needs for ``shares`` (bytes per rank) placed in blocks of consecutive
    ranks (Open MPI's default, by slot): the most any node holds."""
    per = -(-len(shares) // nodes)
    held = max(sum(shares[i:i + per]) for i in range(0, len(shares), per))
    return Memory(per, Q_(held, "B"), Q_(2 * held, "B"), has)


@dataclass(frozen=True)
class Saving:
    """A save and a restore on a topology: the storage's ceilings (``storage``), the clients' generation ceiling
    (least, most; None where a client group does not state it), its per-client figure, how many client nodes the
    ranks run on, the memory each client needs, and the model (None for a checkpoint given as a size).
    """

    storage: Checkpoint
    generation: tuple[Quantity, Quantity] | None
    per_client: Capacity | None
    nodes: int
    memory: Memory
    model: LLM | None = None

    @property
    def size(self) -> Quantity:
        return self.storage.size

    def save(self) -> tuple[Quantity, Quantity]:
        """The save's ceiling, (least, most): the slower of the generation and the storage's write path."""
        write = self.storage.write
        if self.generation is None:
            return write.least, write.value
        return min(self.generation[0], write.least), min(self.generation[1], write.value)

    def binds(self, low: bool = False) -> str:
        """Which part binds the save at its most favourable end (``low``: its least): "generation" or "storage"."""
        if self.generation is None:
            return "storage"
        write = self.storage.write.least if low else self.storage.write.value
        return "generation" if self.generation[0 if low else 1] < write else "storage"

    def needed(self) -> Quantity:
        """How fast each client node must generate for the storage's write path to bind (at its most)."""
        return (self.storage.write.value / self.nodes).to("GB/s")

    def times(self) -> tuple[tuple[Quantity, Quantity], tuple[Quantity, Quantity]]:
        """(save, restore) times, each (shortest, longest)."""
        least, most = self.save()
        return ((self.size / most).to("s"), (self.size / least).to("s")), self.storage.read_time


def generated(topology: Topology, nodes: dict[str, int]) -> tuple[tuple[Quantity, Quantity] | None, Capacity | None]:
    """The clients' generation ceiling over ``nodes`` (client group -> nodes used), (least, most), and the first
    group's per-client figure; (None, None) where a group does not state its ``checkpoint_generation``."""
    rates = {name: topology.group(name).capacity(GENERATION) for name in nodes}
    if not rates or any(r is None or r.value is None for r in rates.values()):
        return None, None
    low = sum((r.ends[0] * nodes[n] for n, r in rates.items()), Q_(0, "B/s"))
    high = sum((r.ends[1] * nodes[n] for n, r in rates.items()), Q_(0, "B/s"))
    return (low.to("GB/s"), high.to("GB/s")), next(iter(rates.values()))


def saving(model: Model, size: Quantity | LLM, ranks: int | None = None, *,
           clients: tuple[str, ...] | None = None) -> Saving:
    """A checkpoint of ``size`` (or of a model, its closed ranks by default) from ``ranks`` ranks on the model's
    topology: the storage's ceilings (:func:`models.accelerators.checkpoint`), the clients' generation at their
    ``checkpoint_generation`` (per node, times the nodes the ranks run on) and the memory each client needs.

    Raises
    ------
    ValueError
        If ``ranks`` is not a whole number of at least 1, none is given for a size, or a model cannot be split
        over them.
    """
    from models.accelerators import checkpoint
    from probes.core.workload import Operation, Workload

    found = size if isinstance(size, LLM) else None
    if ranks is None:
        if found is None:
            raise ValueError("A checkpoint of a size needs the ranks that write it.")
        ranks = found.ranks
    shares = found.shares(ranks) if found else None
    total = Q_(sum(shares), "B") if shares else size
    storage = checkpoint(model, total, ranks, clients=clients)
    names, counts = model.nodes(Workload(Operation.WRITE, None), clients)
    nodes = {name: min(counts[name], ranks) if len(names) == 1 else counts[name] for name in names}
    generation, per_client = generated(model.topology, nodes)
    used = sum(nodes.values())
    stated = [model.topology.group(name).capacity("memory") for name in names]
    has = min((c.ends[0] for c in stated if c is not None and c.value is not None), default=None) \
        if all(c is not None for c in stated) else None
    held = memory(shares if shares else (int(total.m_as("B") / ranks),) * ranks, used, has)
    return Saving(storage, generation, per_client, used, held, found)
