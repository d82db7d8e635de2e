"""``buildarena``: Besiege-style block machines built with a geometry library, judged by MuJoCo simulation.

The suite registers through the entry point ``buildbench.suites.buildarena.suite:suite``; importing
this package imports nothing else, so code that only needs the library or the catalogue does not
import the simulator or the model clients.
"""
