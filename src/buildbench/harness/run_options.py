"""A stored run's options on each of its episodes, for the readers that summarise runs.

Some of what a suite's tables group by is a run option, known for every episode of the run,
not only for those that stored an outcome: DreamHouse's Frame/Facade condition is
``-o condition=…``, and an episode that errored before its env gave an outcome still belongs to
its run's condition. A summarizer takes episodes only, often of several runs at once (``dreamhouse
report RUN RUN``), so the reports put each run's options on its episodes as they read them, under
``metadata["run_options"]``: the options the run gave explicitly, as its config stores them (a
suite reads its own default for one not given). This happens in memory: the store is unchanged,
so runs stored before keep reading the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .episode import Episode

__all__ = ["RUN_OPTIONS", "given_run_options", "with_run_options"]

#: The episode metadata key that holds its run's given options.
RUN_OPTIONS = "run_options"


def with_run_options(episodes: Iterable[Episode], config: Mapping[str, Any]) -> list[Episode]:
    """``episodes`` (read from one run's store) with ``config["options"]`` put on each, in place.

    A config without an options mapping (a hand-made or damaged store) puts nothing: its episodes
    read as having no known run options.
    """
    options = config.get("options") if isinstance(config, Mapping) else None
    out = list(episodes)
    if isinstance(options, Mapping):
        given = dict(options)
        for episode in out:
            episode.metadata[RUN_OPTIONS] = given
    return out


def given_run_options(episode: Episode) -> Mapping[str, Any] | None:
    """The options ``episode``'s run gave explicitly; None when they are not known (an episode
    that no report read from its run)."""
    options = episode.metadata.get(RUN_OPTIONS)
    return options if isinstance(options, Mapping) else None
