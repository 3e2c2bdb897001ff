"""A Python client of the shingled daemon, and a Scrapy middleware built on it.

    from shingled_client import Client
    client = Client("http://127.0.0.1:8480")
    result = client.post_page("https://example.com/a", b"<p>...</p>")
    print(result.verdict, result.doc, result.cluster)

The Scrapy downloader middleware is :class:`shingled_client.scrapy.ShingledMiddleware`
(docs/CLIENTS.md). This package needs the standard library only; the middleware needs Scrapy.
"""

from .client import Client
from .results import REDIRECT_STATUSES, VERDICTS, BatchResult, PageResult, format_date
from .retry import NO_RETRY, RetryPolicy, parse_retry_after
from .errors import (ApiError, Conflict, ConnectionFailed, InsufficientStorage, InvalidArgument,
                     MethodNotAllowed, NotFound, NoWarcRecords, PayloadTooLarge, ServerError,
                     ShingledError, Unauthenticated, Unavailable, UnsupportedMediaType)

__version__ = "0.1.0"

__all__ = [
    "ApiError", "BatchResult", "Client", "Conflict", "ConnectionFailed", "InsufficientStorage",
    "InvalidArgument", "MethodNotAllowed", "NO_RETRY", "NotFound", "NoWarcRecords", "PageResult",
    "PayloadTooLarge", "REDIRECT_STATUSES", "RetryPolicy", "ServerError", "ShingledError",
    "Unauthenticated", "Unavailable", "UnsupportedMediaType", "VERDICTS", "format_date",
    "parse_retry_after",
]
