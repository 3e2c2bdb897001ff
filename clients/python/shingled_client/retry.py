"""When the client tries a request again: :class:`RetryPolicy`, and reading ``Retry-After``."""

from __future__ import annotations

import datetime as _dt
import email.utils
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Tuple


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before trying a request again.

    A request answered with a status in ``statuses`` (503 and 507 by default: the daemon is
    busy, shutting down or out of space, and says so with ``Retry-After``) is tried again, at
    most ``attempts`` times in all. Before the n-th retry (n = 0, 1, ...) it waits
    ``min(backoff * 2**n, max_backoff)`` seconds, or the ``Retry-After`` the daemon sent if that
    is longer. A wait longer than ``max_wait`` is not made: the error is raised at once, so that
    a caller with a deadline (a crawler) is never held for minutes.

    ``retry_connection_errors`` also retries a refused or broken connection (a daemon being
    restarted); off by default, as a daemon that is down usually stays down longer than a
    caller should wait. A timeout is never retried: the daemon is there but slow, and trying
    again would only add load.

    ``sleep`` is how the wait is made; tests pass one that records the waits.
    """

    attempts: int = 4
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_wait: float = 120.0
    statuses: Tuple[int, ...] = (503, 507)
    retry_connection_errors: bool = False
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, not {self.attempts}")
        if self.backoff < 0 or self.max_backoff < 0 or self.max_wait < 0:
            raise ValueError("backoff, max_backoff and max_wait must not be negative")

    def wait_before(self, retry: int, retry_after: Optional[float]) -> float:
        """Seconds to wait before retry number ``retry`` (0 for the first retry)."""
        wait = min(self.backoff * (2 ** retry), self.max_backoff)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return wait


#: A policy that never retries.
NO_RETRY = RetryPolicy(attempts=1)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds from a ``Retry-After`` header (delay-seconds or an HTTP date); None if absent or
    unreadable. A date in the past is 0."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
