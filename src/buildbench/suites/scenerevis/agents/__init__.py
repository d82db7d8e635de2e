"""SceneReVis agents: scripted baselines and the oracle (:mod:`.scripted`), the model agent
(:mod:`.llm`), and the room templates and placement they share (:mod:`.planner`)."""

from .llm import llm
from .scripted import diagnose, one_pass, oracle, random_placement

__all__ = ["diagnose", "llm", "one_pass", "oracle", "random_placement"]
