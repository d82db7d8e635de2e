"""The BuildArena spatial geometric computation library (spec section 2).

One module per command group: ``construction`` (start, attach, connect,
remove, reset, twist, shift, flip), ``queries``, ``assembly``, ``control``;
the commands see a session only as the ``bench.Bench`` protocol and return
a ``bench.Outcome``. ``captions`` words every answer, ``collision`` tests
overlaps exactly, ``registry`` collects the commands and dispatches calls by
name, ``workbench`` is the session that runs them, ``replay`` runs call lists,
``tools`` describes the commands for function calling and ``bodies`` hands
a machine to the physics layer. Imports go one way: bench, commands,
registry, workbench, then replay and tools.

Example:
    >>> from buildbench.suites.buildarena.library import Workbench
    >>> bench = Workbench()
    >>> bench.call("start").ok
    True
    >>> print(bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"}).text.splitlines()[3])
    Position: [0.,1.,0.]
"""

from .bench import CallRecord, Outcome
from .bodies import Body, BodyGraph, Joint, Link, body_graph
from .registry import COMMANDS, Command, commands_in
from .replay import BlockPose, CallResult, ReplayResult, replay, replay_line
from .tools import tool_specs
from .workbench import Workbench, rebuild

__all__ = [
    "COMMANDS",
    "BlockPose",
    "Body",
    "BodyGraph",
    "Joint",
    "Link",
    "CallRecord",
    "CallResult",
    "Command",
    "Outcome",
    "ReplayResult",
    "Workbench",
    "body_graph",
    "commands_in",
    "rebuild",
    "replay",
    "replay_line",
    "tool_specs",
]
