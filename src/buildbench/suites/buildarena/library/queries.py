"""Query commands; they never change the machine and are not recorded in the history (spec 2.5)."""

from __future__ import annotations

from .bench import Bench, Outcome, block_key
from .captions import block_caption, machine_summary


def get_machine_summary(bench: Bench) -> Outcome:
    """Every block's caption without face lists; mandatory as a final check before finishing."""
    return Outcome(machine_summary(bench.machine), ok=True)


def get_block_details(bench: Bench, block_id: object) -> Outcome:
    """The full caption of one block, including its attachable faces."""
    block = bench.find(block_id)
    if block is None:
        return Outcome(f"Block {block_key(block_id)} not found", ok=False)
    return Outcome(block_caption(bench.machine, block), ok=True)
