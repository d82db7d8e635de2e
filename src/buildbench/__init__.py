"""buildbench: agents that build physical things, and the verifiers that judge them."""

__version__ = "0.1.0"
