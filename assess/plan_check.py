"""Whether a run followed its plan (``iobound check --plan``): its transfer size and access, data set, flags,
repetitions, nodes and processes as its own output states them, and what its result means given the share of it a cache could still serve.

A run is matched to the plan's phase of its name (io500's phases), else to the first of its operation. A figure
the output does not state is "not stated", never taken as followed; the cached share is then counted as if the
flag had not been used, the least favourable reading.

The share a cache did serve is inferred from the run's rate against the plan's ceiling for its phase (the storage
path's, no cache counted): bytes read from memory take next to no time beside those the path carries, so a run at r
over a path of c had at least 1 - c / r of its bytes from a cache (more where memory is slower than that). A run at
its ceiling or below it shows none.
"""

from __future__ import annotations

from dataclasses import dataclass

from probes.core.run import Run
from probes.core.units import Q_, Metric, format_quantity

__all__ = ["Item", "Followed", "followed", "measured_share", "PLAN_CHECK_VERSION", "plan_check_body"]

# plan-check format history (the body is plan_check_body's):
#   1.0  first version: per run, its phase, each item planned and as run, the cached share and what it means
#   1.1  per run, the share the plan expected a cache to serve (expected_share) and the share its rate shows
#        (measured_share), each least and most; null where the plan or the run does not give it
#   1.2  per run, the items "transfer size" and "access": the workload the plan's ceiling, data set and flags are for
PLAN_CHECK_VERSION = "1.2"
# How far below the planned data set a run may fall and still have followed it: IOR and fio round to whole transfers.
_ROUNDING = 0.01


@dataclass(frozen=True)
class Item:
    """One thing the plan asked for: as planned, as the run's output states it, and whether they agree (None: the
    output does not say)."""

    name: str
    planned: str
    ran: str
    followed: bool | None

    def to_dict(self) -> dict:
        return {"item": self.name, "planned": self.planned, "ran": self.ran, "followed": self.followed}


@dataclass(frozen=True)
class Followed:
    """A run against its phase of the plan: the items, the share a cache could still serve (least, most) with the
    data set and flags it used, the share the plan left, the share it expected a cache to serve and the share the
    run's rate shows one did (least, most; None where not known), and what the result means."""

    run: Run
    phase: str | None
    items: tuple[Item, ...]
    cached_share: tuple[float, float] | None
    planned_share: tuple[float, float] | None
    meaning: str
    expected_share: tuple[float, float] | None = None
    measured_share: tuple[float, float] | None = None

    @property
    def deviates(self) -> bool:
        return self.phase is None or any(i.followed is False for i in self.items)

    def to_dict(self) -> dict:
        return {"run": self.run.label, "source": str(self.run.origin), "phase": self.phase,
                "items": [i.to_dict() for i in self.items],
                "cached_share": None if self.cached_share is None else list(self.cached_share),
                "planned_share": None if self.planned_share is None else list(self.planned_share),
                "expected_share": None if self.expected_share is None else list(self.expected_share),
                "measured_share": None if self.measured_share is None else list(self.measured_share),
                "meaning": self.meaning}


def followed(plan: dict, runs: list[Run]) -> list[Followed]:
    """Each run with a workload against the phase of ``plan`` (an iobound/plan document) it ran."""
    return [_one(plan, run) for run in runs if run.workload is not None]


def _phase(plan: dict, run: Run) -> dict | None:
    named = [p for p in plan["phases"] if p["name"] in run.label]
    if named:
        return max(named, key=lambda p: len(p["name"]))  # "ior-easy-write", not "write"
    op = run.workload.operation.value
    return next((p for p in plan["phases"] if p["workload"]["operation"] == op), None)


def _one(plan: dict, run: Run) -> Followed:
    phase = _phase(plan, run)
    if phase is None:
        return Followed(run, None, (), None, None, f"the plan has no phase of {run.workload.operation.value}")
    w = run.workload
    tags = dict(run.tags)
    metadata = phase["unit"] == "files"
    items = []
    if not metadata:  # the workload the ceiling, data set and flags were planned for
        size = phase["workload"]["transfer_size"]
        if size is not None:
            ran = None if w.transfer_size is None else w.transfer_size.m_as("B")
            items.append(Item("transfer size", _bytes(size["value"]), "not stated" if ran is None else _bytes(ran),
                              None if ran is None else abs(ran - size["value"]) <= _ROUNDING * size["value"]))
        access = phase["workload"]["access"]
        items.append(Item("access", access, w.access.value, w.access.value == access))
        data = None if w.data_set is None else w.data_set.m_as("B")
        items.append(Item("data set", _bytes(phase["amount"]), "not stated" if data is None else _bytes(data),
                          None if data is None else data >= phase["amount"] * (1 - _ROUNDING)))
    used = {}
    for cache in phase["caches"]:
        means = cache["means"]
        if not means or means in used:
            continue
        used[means] = _used(means, w.direct, tags)
        shown = {True: "used", False: "not used", None: "not stated"}[used[means]]
        items.append(Item(cache["defeated_by"], "used", shown, used[means]))
    # fio's loops pass over the data set again within one result: the repetitions its plan asks for
    ran = int(tags.get("loops", run.summary.n))
    shown = f"{ran} loops in one result" if "loops" in tags else str(ran)
    items.append(Item("repetitions", str(plan["repetitions"]), shown, ran >= plan["repetitions"]))
    for name, planned, ran in (("nodes", plan["nodes"], w.nodes), ("processes per node", plan["ppn"], w.ppn)):
        if planned is not None:
            items.append(Item(name, str(planned), "not stated" if ran is None else str(ran),
                              None if ran is None else ran == planned))
    amount = phase["amount"] if metadata or w.data_set is None else w.data_set.m_as("B")
    share = _share(phase, amount, used, metadata)
    planned = tuple(phase["cached_share"])
    expected = None if phase["expected_share"] is None else tuple(phase["expected_share"])
    measured = None if metadata or run.metric is not Metric.BANDWIDTH else measured_share(phase["ceiling"], run)
    meaning = _meaning(share, planned) + _measured_meaning(measured, expected, phase["ceiling"], run)
    return Followed(run, phase["name"], tuple(items), share, planned, meaning, expected, measured)


def measured_share(ceiling: dict, run: Run) -> tuple[float, float]:
    """The least share of the run's bytes a cache served (least, most over the ceiling's range), from its rate against
    the storage path's ceiling (a plan's ceiling document), bytes from memory taken to cost no time."""
    rate = run.value.m_as("B/s")
    high = ceiling["ceiling"]["value"]
    low = high if ceiling["low"] is None else ceiling["low"]["ceiling"]["value"]
    return tuple(max(0.0, 1 - c / rate) if rate > 0 else 0.0 for c in (high, low))


def _measured_meaning(measured: tuple[float, float] | None, expected: tuple[float, float] | None, ceiling: dict,
                      run: Run) -> str:
    """What the run's rate says of the cache, beside what the plan expected."""
    if measured is None:
        return ""
    rate, high = run.value.m_as("B/s"), ceiling["ceiling"]["value"]
    planned = "" if expected is None else f" (the plan expected {_span(expected)})"
    if measured[1] == 0:
        return (f"; its rate, {_rate(rate)}, is at most the ceiling {_rate(high)}: no cache served it, as far as the "
                f"rate shows{planned}")
    if measured[0] == 0:  # between the ends of a ceiling that is a range: which end the storage reaches decides it
        low = ceiling["low"]["ceiling"]["value"]
        return (f"; its rate, {_rate(rate)}, lies between the ceiling's least, {_rate(low)}, and its most, {_rate(high)}: "
                f"no cache need have served it where the storage reaches its most, and at least {measured[1]:.0%} of "
                f"the bytes came from one where it reaches only its least (1 - ceiling / rate){planned}")
    return (f"; its rate, {_rate(rate)}, is {rate / high:.2f}x the ceiling {_rate(high)}: at least {_span(measured)} "
            f"of the bytes came from a cache (1 - ceiling / rate, memory taken to cost no time){planned}")


def _span(share: tuple[float, float]) -> str:
    return f"{share[0]:.0%}" if round(share[0], 2) == round(share[1], 2) else f"{share[0]:.0%} to {share[1]:.0%}"


def _rate(value: float) -> str:
    return format_quantity(Q_(value, "B/s"))


def _used(means: str, direct: bool | None, tags: dict[str, str]) -> bool | None:
    """Whether the run used ``means`` (a key of :data:`models.plan_phases.DEFEATS`), as its output says (None: it
    does not say; dropped caches leave no trace in a benchmark's output)."""
    if means == "direct":
        return direct
    if means == "other_node":
        return True if "read_by_other_node" in tags else False if "reads_own_writes" in tags else None
    if means == "fsync":
        return True if "fsync" in tags else None
    return None


def _share(phase: dict, amount: float, used: dict[str, bool | None], metadata: bool) -> tuple[float, float]:
    """The share of the run's data a cache could serve: the caches whose means it did not (or not visibly) use."""
    from models.plan import cached_share

    open_ = [c for c in phase["caches"] if not (c["means"] and used.get(c["means"]))]
    return cached_share([c["memory_bytes"] for c in open_], amount, metadata)


def _meaning(share: tuple[float, float], planned: tuple[float, float]) -> str:
    most = share[1]
    if most == 0:
        return "no cache could serve it: the result measures the storage path"
    left = f" (the plan left {planned[1]:.0%})"
    if most >= 1:
        return "a cache could serve all of it: the result may be the cache's speed, not the storage's" + left
    return (f"up to {most:.0%} of it could come from a cache{left}: the storage path delivered at least "
            f"{1 - most:.0%} of the bytes, so the result may exceed its rate by up to {1 / (1 - most):.2f}x")


def _bytes(value: float) -> str:
    return format_quantity(Q_(value, "B"))


def render(found: list[Followed], plan_path: str) -> str:
    """Each run against its phase, as people read it."""
    from assess.render import table

    mark = {True: "as planned", False: "DIFFERS", None: "not stated"}
    lines = [f"plan: {plan_path}"]
    for f in found:
        lines += ["", f"{f.run.label} ({f.run.origin}): phase {f.phase or '-'}"]
        rows = [(i.name, i.planned, i.ran, mark[i.followed]) for i in f.items]
        if rows:
            lines += ["  " + r for r in table(("item", "planned", "as run", ""), rows).splitlines()]
        lines.append(f"  meaning: {f.meaning}")
    differ = sum(f.deviates for f in found)
    lines += ["", f"{len(found)} run(s) against the plan: {differ} differ(s) from it" if found else
              "no run with a workload to hold against the plan"]
    return "\n".join(lines)


def plan_check_body(plan_path: str, found: list[Followed]) -> dict:
    """The body of an iobound/plan-check document."""
    return {"plan": plan_path, "runs": [f.to_dict() for f in found]}
