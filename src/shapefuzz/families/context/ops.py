"""Every context op by name: the producers (`producers.py`) and consumers (`consumers.py`),
each with its attributes (`attrs`: name -> kind, as `chain.ContextOp.from_json` checks them)."""

from __future__ import annotations

from typing import Any

from shapefuzz.families.context.consumers import CONSUMERS
from shapefuzz.families.context.producers import PRODUCERS

OPS: dict[str, Any] = {**PRODUCERS, **CONSUMERS}
assert len(OPS) == len(PRODUCERS) + len(CONSUMERS), "a producer and a consumer share a name"
