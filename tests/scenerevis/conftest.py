"""What the SceneReVis tests share: the hand-built scenes of ``scenes_physics.py``, loaded once
and importable as ``scenerevis_scenes_physics`` (``import scenerevis_scenes_physics as H``).

pytest loads this file before the test modules beside it; in its importlib mode no test folder
is on ``sys.path``, so the helper module is registered by name here, not imported by path.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

NAME = "scenerevis_scenes_physics"

if NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(NAME, Path(__file__).with_name("scenes_physics.py"))
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[NAME] = _module
    _spec.loader.exec_module(_module)
