"""``iobound predict TOPOLOGY --kv-cache BLOCK_SIZE --request-rate N``: each KV-cache tier's ceiling, the tier that
binds and what each holds (the options follow MLPerf Storage v3.0's kv-cache.py: --request-rate, --model's names
as --kv-model)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from probes.core.errors import InputError
from probes.core.units import Q_, Metric, format_quantity, quantity_json
from probes.core.workload import Operation
from assess.cli.inputs import checked, edited_topology, size_arg

if TYPE_CHECKING:
    from models.kvcache import KVPrediction, TierCeiling

__all__ = ["add_kv_arguments", "kv_cache", "KV_CACHE_VERSION", "render_kv", "kv_body"]

# kv-cache format history (the body is kv_body's):
#   1.0  first version: the blocks, the request rate and demand, each tier's rate, blocks and tokens per second, what
#        it holds (bytes, blocks, tokens), whether the working set reaches it and whether it keeps up; the tier that binds
KV_CACHE_VERSION = "1.0"


def requests_arg(text: str):
    """Requests per second above zero (one KV block each), such as 200 or 200/s."""
    return Q_(checked(text, lambda t: float(t.strip().removesuffix("/s")), lambda v: 0 < v < float("inf"),
                       "requests per second above 0, e.g. 200"), "op/s")


def add_kv_arguments(parser: argparse.ArgumentParser) -> None:
    """The KV-cache question, in a group of its own."""
    group = parser.add_argument_group("KV-cache offload (the topology's [kv_cache] tiers; --op write stores, read fetches)")
    group.add_argument("--kv-cache", type=size_arg, metavar="BLOCK_SIZE",
                       help="the KV block one request stores or fetches, e.g. 32MiB (256 tokens of llama3.1-8b)")
    group.add_argument("--request-rate", type=requests_arg, metavar="N",
                       help="requests per second, one block each (kv-cache.py's --request-rate)")
    group.add_argument("--kv-model", metavar="MODEL",
                       help="the model whose bytes per token give tokens per second (kv-cache.py's --model names: "
                            "llama3.1-8b, llama3.1-70b-instruct, mistral-7b ...)")
    group.add_argument("--token-size", type=size_arg, metavar="SIZE",
                       help="bytes of KV-cache per token, for a model kv-cache.py does not name")
    group.add_argument("--working-set", type=size_arg, metavar="SIZE",
                       help="the KV-cache the node holds in all: the tiers it spills to (default: every tier)")


def kv_cache(args: argparse.Namespace) -> int:
    """Predict the KV-cache tiers' ceilings as the arguments ask, and print them."""
    from assess.render import dumps, envelope
    from models.kvcache import predict_kv, token_bytes

    if args.request_rate is None:
        raise InputError("--request-rate", "", "give the requests per second, one block each: --request-rate N")
    operations = args.op or [Operation.WRITE]
    if len(operations) > 1 or operations[0] not in (Operation.WRITE, Operation.READ):
        raise InputError("--op", "", "a KV-cache request stores (--op write) or fetches (--op read) a block: give one")
    token = args.token_size
    if args.kv_model and token is not None:
        raise InputError("--token-size", "", "give the model (--kv-model) or its bytes per token (--token-size), not both")
    if args.kv_model:
        try:
            token = token_bytes(args.kv_model)
        except KeyError as exc:
            raise InputError("--kv-model", "", str(exc).strip("'\"")) from None
    topology = edited_topology(args)
    try:
        found = predict_kv(topology, args.kv_cache, args.request_rate, operations[0], token_size=token,
                           working_set=args.working_set)
    except ValueError as exc:
        raise InputError(topology.path, "kv_cache", str(exc)) from None
    system = {"name": topology.name, "path": topology.path}
    if args.json:
        print(dumps(envelope("kv-cache", KV_CACHE_VERSION, kv_body(system, found))))
    else:
        print(render_kv(found, f"{topology.name} ({topology.path})"))
    return 0


def _per_second(x: float) -> str:
    """A count per second as people read it: whole thousands from 100 up (25,558,472/s), three digits below."""
    return f"{x:,.0f}/s" if x >= 100 else f"{x:.3g}/s"


def _pair(low, high, shown) -> str:
    return shown(high) if low == high else f"{shown(low).split(' ')[0]} to {shown(high)}"


def render_kv(found: KVPrediction, system: str) -> str:
    """Each tier's ceiling as people read it, the tier that binds marked."""
    from assess.render import table

    def rate(q):
        return format_quantity(q.to("GB/s"), unit="GB/s")

    def blocks(q):
        return _per_second(q.m_as("op/s"))
    rows = []
    for c in found.tiers:
        r = c.rate
        rows.append((r.tier.name, r.tier.tier.value, r.span(), _pair(*c.blocks, blocks),
                     _pair(*c.tokens, _per_second) if c.tokens else "-",
                     "-" if c.holds is None else f"{format_quantity(c.holds, Metric.SIZE)} ({c.holds_blocks:,} blocks)",
                     c.keeps_up if c.reached else "not reached", "<- binds" if c is found.binding else ""))
    verb = "stores" if found.operation is Operation.WRITE else "fetches"
    lines = [f"system:    {system}",
             f"workload:  {found.requests.m_as('op/s'):,.6g} requests/s, each {verb} a block of "
             f"{format_quantity(found.block, Metric.SIZE)}: {rate(found.demand)}"
             + (f" (working set {format_quantity(found.working_set, Metric.SIZE)})" if found.working_set else ""),
             "", table(("tier", "kind", "rate", "blocks", "tokens", "holds", "keeps up", ""), rows, right=(2, 3, 4, 5)),
             "", f"binds:     {_binds(found.binding, found)}",
             "", "rates:", *(f"  {c.rate.tier.name}: {c.rate.said}" for c in found.tiers)]
    return "\n".join(lines)


def _binds(c: TierCeiling, found: KVPrediction) -> str:
    most = _per_second(c.blocks[1].m_as("op/s")).removesuffix("/s")
    return (f"{c.rate.tier.name} ({c.rate.tier.tier.value}), the slowest tier the "
            f"{'working set reaches' if found.working_set else 'blocks reach'}: at most {most} requests/s of this block")


def kv_body(system: dict, found: KVPrediction) -> dict:
    """The body of an iobound/kv-cache document."""
    def tier(c: TierCeiling) -> dict:
        r = c.rate
        return {"name": r.tier.name, "tier": r.tier.tier.value, "count": r.tier.count,
                "rate": [quantity_json(r.least), quantity_json(r.most)], "rate_source": r.said, "stated": r.stated,
                "blocks_per_second": [q.m_as("op/s") for q in c.blocks],
                "tokens_per_second": list(c.tokens) if c.tokens else None, "holds": quantity_json(c.holds),
                "holds_blocks": c.holds_blocks, "holds_tokens": c.holds_tokens,
                "reached": c.reached, "keeps_up": c.keeps_up}
    return {"system": system, "operation": found.operation.value, "block": quantity_json(found.block),
            "request_rate": found.requests.m_as("op/s"), "demand": quantity_json(found.demand),
            "token_size": quantity_json(found.token_bytes), "working_set": quantity_json(found.working_set),
            "tiers": [tier(c) for c in found.tiers], "binds": found.binding.rate.tier.name}
