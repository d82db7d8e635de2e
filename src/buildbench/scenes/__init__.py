"""Indoor scenes shared by the LEGO-Eval and SceneReVis suites.

Modules, one concept each:

* :mod:`~buildbench.scenes.model` — rooms, walls, doors, windows, objects (metres, y up).
* :mod:`~buildbench.scenes.catalogue` — asset sizes and attributes, materials, categories.
* :mod:`~buildbench.scenes.build` — houses built in code with Holodeck's ids.
* :mod:`~buildbench.scenes.io` — load/save THOR house JSON and SceneReVis JSON.
* :mod:`~buildbench.scenes.formats` — other projects' formats (ReSpace, SceneEval, LayoutGPT,
  I-Design, LayoutVLM), one module each, in one table (``buildbench scenes convert``).
* :mod:`~buildbench.scenes.evaluate` — a generator's outputs scored by LEGO-Eval and SceneReVis
  (``buildbench scenes evaluate``).
"""
