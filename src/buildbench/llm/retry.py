"""Retry policy: exponential back-off with optional seeded jitter, honouring Retry-After."""

from __future__ import annotations

import email.utils
import math
import random
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failed model call is retried.

    The wait before retry ``n`` (1-based) is ``base_delay_s * factor ** (n - 1)`` capped at
    ``max_delay_s``, then stretched by up to ``jitter`` (a fraction) drawn from an RNG seeded
    with ``seed``, so a run's waits are reproducible. A server's Retry-After wins over the
    computed wait, capped at ``max_retry_after_s``.

    Attributes:
        max_attempts: Total attempts, the first included (1 disables retries).
        base_delay_s: Wait before the first retry, seconds.
        factor: Growth of the wait per retry.
        max_delay_s: Cap on the computed wait, seconds.
        jitter: Extra random fraction of the wait, in [0, 1]; 0 for none.
        max_retry_after_s: Cap on a server-requested wait, seconds.
        seed: Seed of the jitter RNG.
    """

    max_attempts: int = 5
    base_delay_s: float = 1.0
    factor: float = 2.0
    max_delay_s: float = 30.0
    jitter: float = 0.0
    max_retry_after_s: float = 60.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"RetryPolicy.max_attempts: must be >= 1, got {self.max_attempts}")
        for name in ("base_delay_s", "max_delay_s", "max_retry_after_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"RetryPolicy.{name}: must be >= 0, got {getattr(self, name)}")
        if self.factor < 1:
            raise ValueError(f"RetryPolicy.factor: must be >= 1, got {self.factor}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"RetryPolicy.jitter: must be in [0, 1], got {self.jitter}")

    def backoff(self) -> Backoff:
        """A fresh back-off sequence with its own seeded RNG."""
        return Backoff(self, random.Random(self.seed))


@dataclass
class Backoff:
    """The stateful side of a :class:`RetryPolicy`: the jitter RNG of one client."""

    policy: RetryPolicy
    rng: random.Random

    def delay_s(self, retry: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 = the first retry)."""
        p = self.policy
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), p.max_retry_after_s)
        delay = min(p.base_delay_s * p.factor ** (retry - 1), p.max_delay_s)
        if p.jitter > 0:
            delay *= 1.0 + p.jitter * self.rng.random()
        return delay


def parse_retry_after(headers: dict[str, str] | object, now_s: float | None = None) -> float | None:
    """Seconds a server asked us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` may be seconds (integer or decimal) or an HTTP date. Returns None when
    neither header is present or readable.

    Args:
        headers: A case-insensitive mapping (httpx headers) or a plain dict.
        now_s: The current epoch time, for HTTP dates (defaults to ``time.time()``).
    """
    get = getattr(headers, "get", None)
    if get is None:
        return None
    ms = get("retry-after-ms") or get("Retry-After-Ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
            return value if math.isfinite(value) else None
        except ValueError:
            pass
    raw = get("retry-after") or get("Retry-After")
    if raw is None:
        return None
    try:
        value = float(raw)
        return value if math.isfinite(value) else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now_s is None else now_s), 0.0)
