# The exception classes of SPEC §3, the classes every API error of apimacro is raised as.
#
# Not a module to import: at start-up the host reads this file and executes it in the
# namespace of ``_apimacro`` (ApimacroModule.install), where ``_redact`` is already defined;
# ``apimacro`` re-exports them. They live in Python so macros can subclass, raise and catch
# them like any other exception; ``__module__`` is ``apimacro`` so tracebacks read well and
# pickle finds them as ``apimacro.NotFound``. The native module maps WebAPI's error kinds
# onto them in one table (APIError+Python.swift).

class APIError(Exception):
    """Base class of every apimacro API error.

    Attributes: status (int or None), url (redacted), api (client name),
    body (response text or None, at most 4 KiB), errors (the API's list of what
    was wrong, such as GitHub's 422 "errors": [{"resource", "field", "code"}];
    empty when it sent none). The message, url, body and errors are redacted when
    the error is made: no secret apimacro knows stays in them.
    """

    def __init__(self, message="", *, status=None, url=None, api=None, body=None, errors=None):
        message = _redact(message)
        super().__init__(message)
        self.message = message
        self.status = status
        self.url = _redact(url)
        self.api = api
        if body is not None and not isinstance(body, str):
            body = bytes(body).decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else str(body)
        self.body = _redact(body)[:4096] if body is not None else None
        self.errors = _redact(list(errors)) if errors is not None else []

    def __repr__(self):
        parts = [repr(self.message)]
        for name in ("status", "url", "api"):
            value = getattr(self, name, None)
            if value is not None:
                parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

class NetworkError(APIError):
    """No HTTP response: connection refused or reset, DNS or TLS failure."""

class Timeout(NetworkError):
    """The request's deadline passed."""

class HTTPError(APIError):
    """A non-2xx status not covered by a more specific class."""

class NotFound(HTTPError):
    """404 Not Found."""

class Unauthorized(HTTPError):
    """401, or an OAuth token error in an API envelope."""

class Forbidden(HTTPError):
    """403 that is not a rate limit."""

class RateLimited(HTTPError):
    """429, or 403 with x-ratelimit-remaining: 0 or retry-after, or an API's secondary limit.

    reset_at: epoch seconds when the limit resets, or None.
    retry_after: seconds to wait, or None.
    secondary: True for a secondary limit (GitHub's "You have exceeded a secondary rate
    limit"), which no rate-limit header announces.
    """
    def __init__(self, message="", *, reset_at=None, retry_after=None, secondary=False, **kwargs):
        super().__init__(message, **kwargs)
        self.reset_at = reset_at
        self.retry_after = retry_after
        self.secondary = bool(secondary)

class ParseError(APIError):
    """A 2xx body that is not the JSON the client expects."""

class AuthError(APIError):
    """Login failed, or a call needs credentials that are missing."""

class OfflineError(APIError):
    """--offline or --replay, and neither the cache nor the recording has the response."""

class GraphQLError(APIError):
    """A GraphQL answer that holds `errors` (GitHub sends them with HTTP 200).

    errors: the list of errors as sent, redacted; data: the partial data sent with them, or None.
    str() is the first error's message.
    """
    def __init__(self, message="", *, errors=None, data=None, **kwargs):
        super().__init__(message, **kwargs)
        self.errors = _redact(list(errors)) if errors is not None else []
        self.data = data

class GraphAPIError(APIError):
    """An error the Graph API (Instagram) answered with its error envelope.

    code, subcode, fbtrace_id: the envelope's fields (None when it had none). Such an
    error is also the class its kind makes it (NotFound, RateLimited, ...), named as that
    class: ``except apimacro.NotFound`` catches it, and so does ``except apimacro.GraphAPIError``.
    """
    code = None
    subcode = None
    fbtrace_id = None
    # The class it is a Graph error of (NotFound, ...), on the classes _graph_class makes.
    _kind = None

    def __reduce__(self):
        if type(self)._kind is None:
            return super().__reduce__()
        return (_graph_error, (type(self)._kind.__name__, self.args), self.__dict__)

_graph_classes = {}

def _graph_class(cls):
    """The class of the Graph API's errors of kind ``cls``: a subclass of both, named as ``cls``."""
    made = _graph_classes.get(cls)
    if made is None:
        made = type(cls.__name__, (cls, GraphAPIError), {"__doc__": cls.__doc__, "_kind": cls})
        # Named as its kind's class, so a traceback reads apimacro.NotFound (pickle goes through
        # GraphAPIError.__reduce__, not the name).
        made.__module__ = "apimacro"
        made.__qualname__ = cls.__qualname__
        _graph_classes[cls] = made
    return made

def _graph_error(name, args):
    """A Graph error of the class called ``name`` holding ``args``, for pickle; its attributes follow."""
    cls = _graph_class(globals()[name])
    return cls.__new__(cls, *args)

class MacroTimeout(BaseException):
    """The macro ran past --timeout. A BaseException, so `except Exception` does not swallow it."""

for _cls in (APIError, NetworkError, Timeout, HTTPError, NotFound, Unauthorized, Forbidden,
             RateLimited, ParseError, AuthError, OfflineError, GraphQLError, GraphAPIError, MacroTimeout):
    _cls.__module__ = "apimacro"
del _cls
