"""What the SceneReVis tests share, each helper module loaded once and importable under its name:
the hand-built scenes of ``scenes_physics.py`` as ``scenerevis_scenes_physics`` (``import
scenerevis_scenes_physics as H``), and the replay of the original's recorded turns,
``original_replay.py``, as ``scenerevis_original_replay``.

pytest loads this file before the test modules beside it; in its importlib mode no test folder
is on ``sys.path``, so the helper module is registered by name here, not imported by path.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HELPERS = {"scenerevis_scenes_physics": "scenes_physics.py", "scenerevis_original_replay": "original_replay.py"}

for _name, _file in HELPERS.items():
    if _name not in sys.modules:
        _spec = importlib.util.spec_from_file_location(_name, Path(__file__).with_name(_file))
        assert _spec is not None and _spec.loader is not None
        _module = importlib.util.module_from_spec(_spec)
        sys.modules[_name] = _module
        _spec.loader.exec_module(_module)
