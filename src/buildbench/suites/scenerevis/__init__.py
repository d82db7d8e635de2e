"""SceneReVis: diagnose-and-act room layout (spec: shared/specs/scenerevis.md).

A model (or a scripted agent) creates an empty room, then edits a JSON scene graph over
several turns, seeing a merged top + diagonal render; rooms are scored on collisions and
out-of-bounds objects. The harness suite is :data:`buildbench.suites.scenerevis.suite.suite`.
"""
