"""A checkpoint's save and restore in words and JSON: what binds each, how long each takes, what memory a client
needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from probes.core.units import format_quantity, quantity_json
from models.ceiling import format_span

if TYPE_CHECKING:
    from pint import Quantity

    from models.checkpoints import Saving

__all__ = ["CHECKPOINT_VERSION", "render_checkpoint", "checkpoint_body", "generation_words"]

# checkpoint format history (the body is checkpoint_body's):
#   1.0  first version: the write and read ceilings and times of one checkpoint
#   1.1  the model (name, parameters, bytes per parameter, source; null for a size), the clients' generation
#        (per_client, ceiling least and most, null where not stated; needed: per client for the storage to bind),
#        save (ceiling least and most, binds and binds_low: "generation" or "storage", seconds) and memory
#        (ranks_per_node, save and restore per client, client memory, fits)
CHECKPOINT_VERSION = "1.1"


def _took(times: tuple[Quantity, Quantity]) -> str:
    short, long = times
    return format_quantity(short) if short == long else f"{format_quantity(short)} to {format_quantity(long)}"


def generation_words(found: Saving) -> str:
    """The clients' generation as a line: its ceiling, or what it must be for the storage to bind."""
    if found.generation is None:
        return (f"not stated ({found.nodes} client nodes; give the clients' checkpoint_generation): the storage binds "
                f"only if each client generates at least {format_quantity(found.needed(), unit='GB/s')}")
    return (f"{format_span(*found.generation)} from {found.nodes} client nodes at {found.per_client.span()} "
            f"each ({found.per_client.source})")


def _memory_words(found: Saving) -> str:
    held = found.memory
    ranks = f"its {held.ranks_per_node} ranks' shares" if held.ranks_per_node > 1 else "its rank's share"
    said = (f"each client holds up to {format_quantity(held.save)} while it saves ({ranks}) "
            f"and {format_quantity(held.restore)} while it restores (torch.load's copy beside the state it holds)")
    if held.has is None:
        return said + "; the clients' memory is not stated"
    if held.fits:
        return said + f"; the clients have {format_quantity(held.has)}: both fit"
    if held.saves:
        return said + f"; the clients have {format_quantity(held.has)}: the save fits, the restore does not"
    return said + f"; the clients have {format_quantity(held.has)}: neither fits"


def render_checkpoint(found: Saving, system: str) -> str:
    """The save and the restore of one checkpoint, as people read them."""
    what = f"{format_quantity(found.size)} in all, from {found.storage.count} ranks on {found.nodes} client nodes"
    if found.model is not None:
        m = found.model
        what = (f"{m.name}, {m.parameters / 1e9:,.2f} billion parameters at "
                f"{found.size.m_as('B') / m.parameters:.2f} B each (fp16 weights and three fp32 optimizer groups): "
                + what)
    (save, restore) = found.times()
    least, most = found.save()
    write, read = found.storage.write, found.storage.read
    storage = f"the storage ({write.binds}: {write.binds_marked})"
    binds = {"generation": "the clients' generation of the tensors", "storage": storage}
    said = binds[found.binds()]
    if found.binds(low=True) != found.binds():
        said += f" (at the least favourable end: {binds[found.binds(low=True)]})"
    if found.generation is None:
        said += (f", if the clients generate at least {format_quantity(found.needed(), unit='GB/s')} each "
                 "(not stated: slower, and their generation binds)")
    lines = [f"system:      {system}", f"checkpoint:  {what}",
             f"memory:      {_memory_words(found)}",
             f"generation:  {generation_words(found)}", "",
             f"save:     at least {_took(save)} at {format_span(least, most)}, bound by {said}",
             f"restore:  at least {_took(restore)} at {format_span(read.least, read.value)}, bound by "
             f"{read.binds} "
             f"({read.binds_marked})"]
    assumptions = dict.fromkeys(write.assumptions + read.assumptions)
    assumptions["ranks placed on the client nodes in blocks (Open MPI's default, by slot)"] = None
    assumptions["the memory is DLIO's in-memory checkpoint (MLPerf Storage v2.0): v3.0's streaming checkpoint "
                "holds only its chunk buffers (mlcommons/storage #249, #518)"] = None
    if found.model is not None:
        assumptions[f"the model's shape and parallelism: {found.model.source}"] = None
    lines += ["", "assumptions:", *(f"  - {a}" for a in assumptions)]
    return "\n".join(lines)


def checkpoint_body(system: dict, found: Saving) -> dict:
    """The body of an iobound/checkpoint document."""
    (save, _) = found.times()
    least, most = found.save()
    m, held = found.model, found.memory
    model = None if m is None else {"name": m.name, "parameters": m.parameters,
                                    "bytes_per_parameter": found.size.m_as("B") / m.parameters, "source": m.source}
    generation = {"per_client": None if found.per_client is None else found.per_client.span(),
                  "ceiling": None if found.generation is None else [quantity_json(q) for q in found.generation],
                  "needed": quantity_json(found.needed())}
    return {"system": system, "size": quantity_json(found.size), "ranks": found.storage.count, "model": model,
            "generation": generation,
            "save": {"ceiling": [quantity_json(least), quantity_json(most)], "binds": found.binds(),
                     "binds_low": found.binds(low=True), "seconds": [t.m_as("s") for t in save]},
            "memory": {"ranks_per_node": held.ranks_per_node, "save": quantity_json(held.save),
                       "restore": quantity_json(held.restore), "client": quantity_json(held.has), "fits": held.fits},
            **{name: {"ceiling": ceiling.to_dict(), "seconds": [t.m_as("s") for t in times]} for name, ceiling, times in
               (("write", found.storage.write, found.storage.write_time),
                ("read", found.storage.read, found.storage.read_time))}}
