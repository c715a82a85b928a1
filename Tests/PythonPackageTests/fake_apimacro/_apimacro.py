"""Pure-Python stand-in for the native ``_apimacro`` module.

Used only when the package tests run under a plain ``/usr/bin/python3``
(put this folder on ``PYTHONPATH``).  It provides exactly the interface the
Swift host guarantees and nothing more, so the tests cannot come to rely on
something the real module lacks.
"""

import time as _time

__version__ = "0.1.0"

# The host's --format flag value ("table", "json", "csv", "ndjson") or None.
default_format = None


class APIError(Exception):
    """Base class of every error raised by an API call."""

    def __init__(self, message="", *, status=None, url=None, api=None, body=None, **extra):
        super().__init__(message)
        self.status = status
        self.url = url
        self.api = api
        self.body = body
        for key, value in extra.items():
            setattr(self, key, value)


class NetworkError(APIError):
    """The request could not be sent or no response was received."""


class Timeout(NetworkError):
    """The request timed out."""


class HTTPError(APIError):
    """The server answered with an error status."""


class NotFound(HTTPError):
    """HTTP 404."""


class Unauthorized(HTTPError):
    """HTTP 401."""


class Forbidden(HTTPError):
    """HTTP 403."""


class RateLimited(HTTPError):
    """HTTP 429, or a 403 caused by an exhausted rate limit."""

    def __init__(self, message="", *, reset_at=None, retry_after=None, **kwargs):
        super().__init__(message, **kwargs)
        self.reset_at = reset_at
        self.retry_after = retry_after


class ParseError(APIError):
    """The response body could not be decoded."""


class AuthError(APIError):
    """No usable credentials for the API."""


class OfflineError(APIError):
    """A network request was attempted in offline mode."""


class MacroTimeout(BaseException):
    """The macro exceeded its time limit."""


def sleep(seconds):
    """Sleep for ``seconds`` (the native version releases the GIL)."""
    _time.sleep(seconds)
