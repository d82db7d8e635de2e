"""Progress of a run: a live bar on a terminal, a log line at most every 10 s elsewhere.

Under nohup, Slurm or Ray the output is a file, where a live bar prints nothing until the run
ends; a researcher tailing the log needs to see that the run moves and whether episodes fail.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from .episode import Episode, is_scored

#: Seconds between two progress lines when the output is not a terminal.
LOG_INTERVAL_S = 10.0


class Progress:
    """Counts finished episodes of one run (or other work, named by ``unit``) and shows them; nothing when
    disabled."""

    def __init__(self, enabled: bool, total: int, label: str, *, stream: TextIO | None = None,
                 interactive: bool | None = None, interval_s: float = LOG_INTERVAL_S, unit: str = "episodes") -> None:
        self.enabled = enabled and total > 0
        self.total, self.label, self.unit = total, label, unit
        self.done = self.unscored = 0
        self._episodes = False  # "unscored" means something only when episodes are counted
        self._stream = stream
        self._interactive = interactive
        self._interval_s = interval_s
        self._bar: Any = None
        self._task: Any = None
        self._start = self._last_log = 0.0

    def __enter__(self) -> Progress:
        if not self.enabled:
            return self
        self._start = self._last_log = time.monotonic()
        from rich.console import Console

        console = Console(file=self._stream) if self._stream is not None else Console()
        interactive = console.is_terminal if self._interactive is None else self._interactive
        if interactive:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("{task.fields[last]}"), transient=False,
                            console=console)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, last="")
        return self

    def advance(self, episode: Episode) -> None:
        """One more episode finished."""
        if not self.enabled:
            return
        self._episodes = True
        self.unscored += 0 if is_scored(episode) else 1
        self.update(self.done + 1, f"{episode.task_id}: {episode.status}")

    def update(self, done: int, last: str = "") -> None:
        """``done`` of the total finished (any work counted in ``unit``); ``last`` names the latest."""
        if not self.enabled:
            return
        self.done = done
        if self._bar is not None:
            self._bar.update(self._task, completed=done, last=last)
            return
        now = time.monotonic()
        if now - self._last_log >= self._interval_s or self.done == self.total:
            self._last_log = now
            self._log(now)

    def _log(self, now: float) -> None:
        elapsed = max(now - self._start, 1e-9)
        stream = self._stream or sys.stdout
        unscored = f", unscored {self.unscored}" if self._episodes else ""
        stream.write(f"progress {self.label}: {self.done}/{self.total} {self.unit}, "
                     f"{self.done / elapsed:.2f}/s, {elapsed:.0f} s{unscored}\n")
        stream.flush()

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
