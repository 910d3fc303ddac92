"""Size a system to targets: how many of which catalogue parts, cheapest first, by integer programming.

A design is a choice of part types (:mod:`.designs`): a network, a server chassis with a number
of ports of it, a device that fits the chassis, and the candidate metadata servers; a plan is
one design for one question (:mod:`.question`). The programme (:mod:`.programme`) finds each
design's cheapest counts from the model's layers, linear in the counts (:mod:`.forms`). The
counts it finds are predicted again with the full model, with the switches and gateways a
network of them needs (:mod:`.fabric`), and that prediction is what is reported
(:mod:`.answer`), with every layer's headroom, what the design survives and its bill of
materials (:mod:`.bill`).
"""

from models.sizing.answer import DAY, SIZING_VERSION, Configuration, Shortfall, Sizing
from models.sizing.bill import Bill, BillLine
from models.sizing.designs import Design, Plan, designs
from models.sizing.fabric import Fabric
from models.sizing.forms import Bound
from models.sizing.programme import size
from models.sizing.question import Question, Target

__all__ = ["Target", "Question", "Design", "Plan", "Bound", "Fabric", "BillLine", "Bill", "Configuration", "Shortfall",
           "Sizing", "size", "designs", "DAY", "SIZING_VERSION"]
