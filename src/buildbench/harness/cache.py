"""Where regenerable data (generated task splits, models) is kept between runs."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$BUILDBENCH_CACHE/<parts…>`` (default ``~/.cache/buildbench``); not created here.

    Everything under it can be deleted at any time: it is rebuilt on demand, deterministically.
    """
    base = os.environ.get("BUILDBENCH_CACHE") or str(Path.home() / ".cache" / "buildbench")
    return Path(base).joinpath(*parts)
