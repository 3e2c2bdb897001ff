"""What the daemon answers for posted pages, and the values a page is posted with."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

#: The verdicts a posted page can get (docs/API.md, "Ingest").
VERDICTS: Tuple[str, ...] = ("new", "unchanged", "duplicate", "near_duplicate", "gone",
                             "redirect", "failed")

#: The statuses the daemon reads as a redirect; a page posted with one needs its ``location``.
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

DateLike = Union[str, _dt.datetime, _dt.date]


@dataclass
class PageResult:
    """The daemon's answer for one posted page.

    ``verdict`` is one of :data:`VERDICTS`, or None for a page of a batch that the store
    refused (``error`` then holds the daemon's ``{"code", "message"}``). ``doc`` and ``cluster``
    are 0 for a dead page, a redirect, or a failed attempt of a URL with no document. ``raw`` is
    the whole answer (``matches``, ``previous``, ``replayed``, ...; docs/API.md).
    """

    url: str
    verdict: Optional[str]
    doc: int = 0
    cluster: int = 0
    url_id: int = 0
    replayed: bool = False
    matches: List[Dict[str, Any]] = field(default_factory=list)
    error: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, answer: Mapping[str, Any]) -> "PageResult":
        """Builds a result from one page's JSON answer."""
        return cls(url=answer.get("url", ""), verdict=answer.get("verdict"),
                   doc=answer.get("doc") or 0, cluster=answer.get("cluster") or 0,
                   url_id=answer.get("url_id") or 0, replayed=bool(answer.get("replayed")),
                   matches=list(answer.get("matches") or []), error=answer.get("error"),
                   raw=dict(answer))


@dataclass
class BatchResult:
    """The daemon's answer for a batch: one :class:`PageResult` per page, in order."""

    pages: int
    errors: int
    results: List[PageResult]


def format_date(value: DateLike) -> str:
    """An ISO-8601 date for the API: a string is passed as it is, a naive datetime is UTC."""
    if isinstance(value, str):
        return value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return value.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return value.isoformat()
