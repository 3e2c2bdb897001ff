"""The errors a :class:`shingled_client.Client` raises.

Every error is a :class:`ShingledError`. An answer of the daemon with an error status is an
:class:`ApiError` (or one of its subclasses, chosen by the status), carrying the status, the
daemon's error ``code`` and ``message`` (docs/API.md, "Errors") and its ``Retry-After``; a
daemon that could not be reached or did not answer in time is a :class:`ConnectionFailed`.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type


class ShingledError(Exception):
    """Anything that went wrong talking to the daemon."""


class ConnectionFailed(ShingledError):
    """The daemon could not be reached, or did not answer within the timeout.

    ``reason`` is the underlying error (a refused connection, a timeout, a reset).
    """

    def __init__(self, message: str, reason: Optional[BaseException] = None) -> None:
        super().__init__(message)
        self.reason = reason

    @property
    def timed_out(self) -> bool:
        """Whether the daemon was reached but did not answer (or accept) in time."""
        return isinstance(self.reason, TimeoutError)


class ApiError(ShingledError):
    """The daemon answered with an error status.

    Attributes:
        status: the HTTP status (400, 404, 503, ...).
        code: the daemon's error code (``invalid_argument``, ``unavailable``, ...), or ``""``
            when the body was not the daemon's JSON error.
        message: the daemon's message, which says what was wrong.
        retry_after: the ``Retry-After`` header in seconds, or None.
        body: the decoded JSON body, or None when the body was not JSON. A WARC upload cut
            short (413, 503, 507) carries the summary of what was stored here.
    """

    def __init__(self, status: int, code: str, message: str,
                 retry_after: Optional[float] = None,
                 body: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(f"HTTP {status} {code}: {message}" if code else f"HTTP {status}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.body = body


class InvalidArgument(ApiError):
    """400: a parameter or the body is wrong; the message says which and why."""


class Unauthenticated(ApiError):
    """401: a token is needed and was missing or wrong."""


class NotFound(ApiError):
    """404: unknown URL, document, cluster, sweep or route."""


class MethodNotAllowed(ApiError):
    """405: the route exists with other methods."""


class Conflict(ApiError):
    """409: the sweep is closed, a closed sweep has that name, or a crawl is (not) running."""


class PayloadTooLarge(ApiError):
    """413: the body, or the batch, is over the daemon's limit."""


class UnsupportedMediaType(ApiError):
    """415: a Content-Type or Content-Encoding the daemon does not take."""


class NoWarcRecords(ApiError):
    """422: a WARC upload in which no record was found."""


class Unavailable(ApiError):
    """503: the daemon is busy, shutting down, or cannot commit: retry after ``retry_after``."""


class InsufficientStorage(ApiError):
    """507: the store is out of space; writes resume once there is room."""


class ServerError(ApiError):
    """500 or another 5xx: a bug in the daemon (details in its log)."""


_BY_STATUS: Dict[int, Type[ApiError]] = {
    400: InvalidArgument,
    401: Unauthenticated,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: NoWarcRecords,
    503: Unavailable,
    507: InsufficientStorage,
}


def error_for(status: int, code: str, message: str, retry_after: Optional[float] = None,
              body: Optional[Dict[str, Any]] = None) -> ApiError:
    """The :class:`ApiError` subclass for ``status``, built from the daemon's answer."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else ApiError
    return cls(status, code, message, retry_after, body)
