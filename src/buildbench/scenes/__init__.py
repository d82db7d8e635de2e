"""Indoor scenes shared by the LEGO-Eval and SceneReVis suites.

Modules, one concept each:

* :mod:`~buildbench.scenes.model` — rooms, walls, doors, windows, objects (metres, y up).
