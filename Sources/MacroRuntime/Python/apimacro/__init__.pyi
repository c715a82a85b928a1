"""Type stubs of apimacro, the module macros import (shipped with the apimacro binary of the
same version; `apimacro stubs --install` puts them where a virtualenv's type checker finds them).

JSON arrives as plain Python: an object is a ``dict``, an array a ``list``. The answers of the
clients' named methods are typed as GitHub, Meta and the shorteners document them (TypedDicts in
``apimacro.github_types``, generated from GitHub's OpenAPI description; plain dicts at run time),
so a type checker catches ``repo["stargazer_count"]``; where an answer may be any JSON, the type is
``Any``. A member marked "awaiting issue N" is declared from
the issue's contract: the test that keeps these stubs in step with the module skips it until
the module has it.
"""

import datetime
import os
import xml.etree.ElementTree
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import IO, Any, Generic, Literal, NotRequired, Self, TypedDict, TypeVar, overload

from apimacro.github_types import CodeSearchResultItem as _CodeSearchResultItem
from apimacro.github_types import CommitSearchResultItem as _CommitSearchResultItem
from apimacro.github_types import Issue as _Issue
from apimacro.github_types import IssueSearchResultItem as _IssueSearchResultItem
from apimacro.github_types import MinimalRepository as _MinimalRepository
from apimacro.github_types import PrivateUser as _PrivateUser
from apimacro.github_types import PublicUser as _PublicUser
from apimacro.github_types import RateLimitOverview as _RateLimitOverview
from apimacro.github_types import Repository as _Repository
from apimacro.github_types import RepoSearchResultItem as _RepoSearchResultItem
from apimacro.github_types import SimpleUser as _SimpleUser
from apimacro.github_types import UserSearchResultItem as _UserSearchResultItem

_T = TypeVar("_T")
_R = TypeVar("_R")
_T_co = TypeVar("_T_co", covariant=True)

# A query parameter's value: None leaves it out, a list repeats the key, a bool is true/false.
_Scalar = str | int | float | bool
_ParamValue = _Scalar | Sequence[_Scalar] | None
_Params = Mapping[str, _ParamValue] | Sequence[tuple[str, _ParamValue]]
# cache=: "1h", "30m", "2d" or seconds (keep that long), "refresh", "only-if-cached", False (off).
_Cache = bool | int | str | None
_HeaderPairs = Mapping[str, str] | Sequence[tuple[str, str]]
_JSONObject = dict[str, Any]
_Fields = str | Sequence[str]
_File = bytes | str | os.PathLike[str] | tuple[str, bytes | str] | tuple[str, bytes | str, str]

__version__: str
default_format: str | None
"""The value of --format (table, json, csv or ndjson), or None when it was not given."""
color: Literal["auto", "always", "never"]
"""When output is coloured: --color, [ui] color, NO_COLOR folded in."""
wide: bool
"""--wide: tables keep long cells whole instead of fitting the terminal."""

args: list[str]
"""The macro's arguments (``sys.argv[1:]``)."""

# -- exceptions (SPEC §3) -------------------------------------------------------------------

class APIError(Exception):
    """Base class of every apimacro API error; message, url and body are redacted."""

    message: str
    status: int | None
    url: str | None
    api: str | None
    body: str | None
    errors: list[Any]
    """The API's list of what was wrong (GitHub's 422 ``errors``), redacted; empty when it sent none."""
    def __init__(
        self,
        message: str = "",
        *,
        status: int | None = None,
        url: str | None = None,
        api: str | None = None,
        body: str | bytes | None = None,
        errors: Iterable[Any] | None = None,
    ) -> None: ...

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
    """429, or 403 with x-ratelimit-remaining: 0 or retry-after."""

    reset_at: float | None
    """Epoch seconds when the limit resets, or None."""
    retry_after: float | None
    """Seconds to wait, or None."""
    secondary: bool
    def __init__(
        self,
        message: str = "",
        *,
        reset_at: float | None = None,
        retry_after: float | None = None,
        status: int | None = None,
        url: str | None = None,
        api: str | None = None,
        body: str | bytes | None = None,
    ) -> None: ...

class ParseError(APIError):
    """A 2xx body that is not the JSON the client expects."""

class AuthError(APIError):
    """Login failed, or a call needs credentials that are missing."""

class OfflineError(APIError):
    """--offline or --replay, and neither the cache nor the recording has the response."""

class GraphAPIError(APIError):
    """An error the Graph API (Instagram) answered with its envelope; also the class its kind makes it (NotFound, ...)."""

    code: int | None
    subcode: int | None
    fbtrace_id: str | None

class GraphQLError(APIError):
    """A GraphQL answer that holds ``errors`` (GitHub sends them with HTTP 200)."""

    errors: list[Any]
    data: Any
    def __init__(
        self,
        message: str = "",
        *,
        errors: Iterable[Any] | None = None,
        data: Any = None,
        status: int | None = None,
        url: str | None = None,
        api: str | None = None,
        body: str | bytes | None = None,
    ) -> None: ...

class MacroTimeout(BaseException):
    """The macro ran past --timeout (a BaseException: ``except Exception`` does not catch it)."""

# -- any HTTP API -----------------------------------------------------------------------------

class Headers(Mapping[str, str]):
    """HTTP headers: a read-only mapping looked up without regard to case."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None: ...
    def __getitem__(self, key: str) -> str: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def get_all(self, key: str) -> list[str]:
        """Every value of a repeated header, in order."""

class Response:
    """An HTTP response: status, url, headers (case-insensitive), content, text, json(), xml()."""

    @property
    def status(self) -> int: ...
    @property
    def ok(self) -> bool: ...
    @property
    def url(self) -> str: ...
    @property
    def headers(self) -> Headers: ...
    @property
    def content(self) -> bytes: ...
    @property
    def text(self) -> str: ...
    def json(self) -> Any:
        """The body decoded as JSON (ParseError if it is not JSON)."""
    def xml(self) -> xml.etree.ElementTree.Element:
        """The body as XML (RSS and Atom feeds included)."""
    def raise_for_status(self) -> None:
        """Raises the matching HTTPError if the status is not 2xx."""

def request(
    method: str,
    url: str,
    params: _Params | None = None,
    headers: _HeaderPairs | None = None,
    json: Any = None,
    data: Mapping[str, _ParamValue] | bytes | str | None = None,
    files: Mapping[str, _File] | None = None,
    auth: tuple[str, str] | None = None,
    timeout: float | None = None,
    cache: _Cache = True,
    check: bool = True,
) -> Response:
    """One HTTP request through apimacro's pipeline (retries, rate limits, cache, redaction, -v)."""

def get(url: str, **kwargs: Any) -> Response:
    """``request("GET", url, **kwargs)``."""

def post(url: str, **kwargs: Any) -> Response:
    """``request("POST", url, **kwargs)``."""

# -- the built-in clients -------------------------------------------------------------------

class PageIterator(Iterator[_T_co], Generic[_T_co]):
    """A lazy iterator over every item of every page; the next page (a GET) is fetched while the items of the one before it are used, never past `limit`."""

    def __iter__(self) -> PageIterator[_T_co]: ...
    def __next__(self) -> _T_co: ...

class _GitHubRateLimit(TypedDict):
    limit: int | None
    remaining: int | None
    reset: int | None
    used: int | None
    resource: str | None

class GitHub:
    """The GitHub REST and GraphQL APIs (APIMACRO_GITHUB_URL, APIMACRO_GITHUB_TOKEN or GITHUB_TOKEN)."""

    def user(self, login: str, *, cache: _Cache = None) -> _PublicUser | _PrivateUser:
        """GET users/{login}."""
    def repos(self, login: str, limit: int | None = None, *, cache: _Cache = None, **params: _ParamValue) -> PageIterator[_MinimalRepository]:
        """GET users/{login}/repos, every page."""
    def followers(self, login: str, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[_SimpleUser]:
        """GET users/{login}/followers, every page."""
    def following(self, login: str, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[_SimpleUser]:
        """GET users/{login}/following, every page."""
    @overload
    def get(self, path: Literal["/user", "user"], params: _Params | None = None, headers: _HeaderPairs | None = None, *, cache: _Cache = None) -> _PrivateUser | _PublicUser: ...
    @overload
    def get(self, path: Literal["/rate_limit", "rate_limit"], params: _Params | None = None, headers: _HeaderPairs | None = None, *, cache: _Cache = None) -> _RateLimitOverview: ...
    @overload
    def get(self, path: str, params: _Params | None = None, headers: _HeaderPairs | None = None, *, cache: _Cache = None) -> Any:
        """One GET relative to the base URL: the decoded JSON (typed for "/user" and "/rate_limit")."""
    @overload
    def paginate(self, path: Literal["/user/repos", "user/repos", "/user/starred", "user/starred"], params: _Params | None = None, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[_Repository]: ...
    @overload
    def paginate(self, path: Literal["/user/followers", "user/followers", "/user/following", "user/following"], params: _Params | None = None, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[_SimpleUser]: ...
    @overload
    def paginate(self, path: Literal["/issues", "issues", "/user/issues", "user/issues"], params: _Params | None = None, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[_Issue]: ...
    @overload
    def paginate(self, path: str, params: _Params | None = None, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[Any]:
        """Every item of every page of a list endpoint (typed for the user's repos, starred, followers, issues)."""
    def graphql(self, query: str, *, cache: _Cache = None, **variables: Any) -> Any:
        """POSTs a GraphQL query; the answer's ``data`` (GraphQLError when it holds ``errors``)."""
    def graphql_paginate(
        self, query: str, path: str, limit: int | None = None, *, cache: _Cache = None, **variables: Any
    ) -> PageIterator[Any]:
        """Every node of the connection at ``path``, one request per page (the query declares ``$cursor``)."""
    def as_account(self, label: str) -> GitHub:
        """A client of GitHub using the stored account ``label`` (``apimacro login github --account LABEL``)."""
    @property
    def rate_limit(self) -> _GitHubRateLimit | None:
        """The rate limit as last seen in response headers, or None before the first request."""
    def post(
        self, path: str, json: Any = None, params: _Params | None = None, headers: Mapping[str, str] | None = None, *, cache: _Cache = None
    ) -> Any:
        """POST relative to the base URL: the decoded JSON."""
    def put(
        self, path: str, json: Any = None, params: _Params | None = None, headers: Mapping[str, str] | None = None, *, cache: _Cache = None
    ) -> Any:
        """PUT relative to the base URL: the decoded JSON."""
    def patch(
        self, path: str, json: Any = None, params: _Params | None = None, headers: Mapping[str, str] | None = None, *, cache: _Cache = None
    ) -> Any:
        """PATCH relative to the base URL: the decoded JSON."""
    def delete(
        self, path: str, json: Any = None, params: _Params | None = None, headers: Mapping[str, str] | None = None, *, cache: _Cache = None
    ) -> Any:
        """DELETE relative to the base URL: the decoded JSON, or None for an empty answer."""
    @overload
    def search(
        self, kind: Literal["issues"], query: str, limit: int | None = None, sort: str | None = None,
        order: Literal["asc", "desc"] | None = None, *, cache: _Cache = None,
    ) -> PageIterator[_IssueSearchResultItem]:
        """Every search result (past GitHub's 1,000-result cap for issues and repositories), typed by kind."""
    @overload
    def search(
        self, kind: Literal["repositories"], query: str, limit: int | None = None, sort: str | None = None,
        order: Literal["asc", "desc"] | None = None, *, cache: _Cache = None,
    ) -> PageIterator[_RepoSearchResultItem]: ...
    @overload
    def search(
        self, kind: Literal["code"], query: str, limit: int | None = None, sort: str | None = None,
        order: Literal["asc", "desc"] | None = None, *, cache: _Cache = None,
    ) -> PageIterator[_CodeSearchResultItem]: ...
    @overload
    def search(
        self, kind: Literal["commits"], query: str, limit: int | None = None, sort: str | None = None,
        order: Literal["asc", "desc"] | None = None, *, cache: _Cache = None,
    ) -> PageIterator[_CommitSearchResultItem]: ...
    @overload
    def search(
        self, kind: Literal["users"], query: str, limit: int | None = None, sort: str | None = None,
        order: Literal["asc", "desc"] | None = None, *, cache: _Cache = None,
    ) -> PageIterator[_UserSearchResultItem]: ...
    @property
    def app(self) -> _JSONObject | None:
        """The GitHub App and installation in use, or None."""
    @property
    def token_expires_at(self) -> Any:
        """When the token expires (GitHub-Authentication-Token-Expiration), or None."""

class _InstagramAccount(TypedDict, total=False):
    """An Instagram account as ``me()`` answers it (the fields asked for; Meta's IG User fields)."""

    id: str
    user_id: str
    username: str
    name: str
    account_type: str
    profile_picture_url: str
    followers_count: int
    follows_count: int
    media_count: int
    biography: str
    website: str

class _InstagramMedia(TypedDict, total=False):
    """A media object as ``media()`` and ``children()`` answer it (the fields asked for; Meta's IG Media fields)."""

    id: str
    caption: str
    media_type: Literal["IMAGE", "VIDEO", "CAROUSEL_ALBUM"]
    media_product_type: str
    media_url: str
    thumbnail_url: str
    permalink: str
    shortcode: str
    timestamp: str
    username: str
    like_count: int
    comments_count: int
    is_comment_enabled: bool
    alt_text: str
    owner: dict[str, Any]
    children: dict[str, Any]

class _InstagramV1Media(TypedDict, total=False):
    """A media object of the legacy v1 API (``recent_media`` there; Graph's fields when it runs on Graph)."""

    id: str
    type: str
    filter: str
    tags: list[str]
    caption: Any
    created_time: str
    link: str
    likes: dict[str, Any]
    comments: dict[str, Any]
    images: dict[str, Any]
    videos: dict[str, Any]
    user: dict[str, Any]
    location: dict[str, Any] | None
    users_in_photo: list[Any]
    user_has_liked: bool
    media_type: str
    media_url: str
    permalink: str
    timestamp: str
    like_count: int
    comments_count: int

class Instagram:
    """The Instagram API with Instagram Login (graph.instagram.com); a base URL ending in /v1 is the legacy v1 API."""

    @property
    def logged_in(self) -> bool:
        """Whether a token is set."""
    def as_account(self, label: str) -> Instagram:
        """A client of Instagram using the stored account ``label`` (``apimacro login instagram --account LABEL``)."""
    def authorize_url(self, state: str | None = None, *, cache: _Cache = None) -> str:
        """The OAuth URL to open in a browser."""
    def complete_login(self, redirect_url: str, *, cache: _Cache = None) -> None:
        """Stores the token from the redirect URL; AuthError on error= or a state mismatch."""
    def me(self, fields: _Fields | None = None, *, cache: _Cache = None) -> _InstagramAccount:
        """The account: user_id, username, name, account_type, followers_count, media_count, ..."""
    def media(
        self, user_id: str = "me", fields: _Fields | None = None, limit: int | None = None, *, cache: _Cache = None
    ) -> PageIterator[_InstagramMedia]:
        """The account's media, every page."""
    def recent_media(
        self, user_id: str = ..., fields: _Fields | None = None, limit: int | None = None, *, cache: _Cache = None
    ) -> PageIterator[_InstagramV1Media]:
        """``media``'s old name (the v1 API: users/{user_id}/media/recent)."""
    def children(self, media_id: str, *, cache: _Cache = None) -> list[_InstagramMedia]:
        """The items of a carousel."""
    def insights(
        self, target: str, metrics: _Fields, period: str | None = None, *, cache: _Cache = None, **params: _ParamValue
    ) -> Any:
        """Media or account insights, as the API shapes them."""
    def followed_by(self, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[_JSONObject]:
        """v1 only: who follows the account (the Graph API has only followers_count)."""
    def follows(self, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[_JSONObject]:
        """v1 only: whom the account follows."""
    def get(self, path: str, params: _Params | None = None, *, cache: _Cache = None) -> Any:
        """One GET relative to the base URL (v1: the envelope's ``data``)."""
    def paginate(
        self, path: str, params: _Params | None = None, limit: int | None = None, *, cache: _Cache = None
    ) -> PageIterator[Any]:
        """Every item of every page."""
    @property
    def rate_limit(self) -> _JSONObject | None:
        """X-App-Usage / X-Business-Use-Case-Usage as last seen (percentages), or None."""

class _ShortLink(TypedDict):
    """A short link as every backend answers it through the client (``raw``: the answer as sent)."""

    id: str
    longUrl: str | None
    created_at: str | None
    backend: str
    raw: dict[str, Any]
    kind: NotRequired[str]
    status: NotRequired[str]

class _BitlyPlanLimit(TypedDict):
    """One monthly limit of the Bitly plan, as GET /v4/organizations/{guid}/plan_limits sends it."""

    name: str
    description: str | None
    count: int
    limit: int

class _BitlyMethodLimit(TypedDict):
    """One method's hourly limit on an endpoint, as GET /v4/user/platform_limits sends it."""

    name: str
    count: int
    limit: int

class _BitlyPlatformLimit(TypedDict):
    endpoint: str
    methods: list[_BitlyMethodLimit]

class _BitlyAPIRequests(TypedDict):
    """The month's API requests: reset is the first of next month (epoch seconds, UTC)."""

    name: str
    count: int
    limit: int
    remaining: int
    reset: int

class _BitlyRateLimit(TypedDict):
    """Bitly's limits, read once a run, with this run's requests counted."""

    plan_limits: list[_BitlyPlanLimit] | None
    platform_limits: list[_BitlyPlatformLimit] | None
    api_requests: _BitlyAPIRequests | None
    organization_guid: str | None
    notes: list[str]

class Shortener:
    """Short links on the backend APIMACRO_SHORTENER names (default: Bitly); ``apimacro help environment`` lists them."""

    @property
    def backend(self) -> str:
        """The backend in use, by its name in APIMACRO_SHORTENER ("bitly" by default)."""
    @property
    def rate_limit(self) -> _BitlyRateLimit | None:
        """Bitly's plan and platform limits (read once a run); None with the other backends."""
    def as_account(self, label: str) -> Shortener:
        """A shortener client using the stored account ``label`` (``apimacro login shortener --account LABEL``)."""
    def shorten(
        self, long_url: str, *, domain: str | None = None, slug: str | None = None, tags: Sequence[str] | None = None, cache: _Cache = None
    ) -> _ShortLink:
        """A short link: id (the short URL), longUrl, created_at, backend, raw."""
    def expand(self, short_url: str, *, cache: _Cache = None) -> _ShortLink:
        """The link behind a short URL: id, longUrl, ..."""
    def links(self, limit: int | None = None, *, cache: _Cache = None) -> PageIterator[_ShortLink]:
        """The account's links, every page."""
    def clicks(self, short_url: str, *, cache: _Cache = None) -> int:
        """Total clicks of a short URL."""

github: GitHub
instagram: Instagram
shortener: Shortener

# -- plugins --------------------------------------------------------------------------------

class PluginClient:
    """A web API declared by a plugin's plugin.toml: one method per endpoint, and plugin.py's functions."""

    @property
    def name(self) -> str: ...
    @property
    def endpoints(self) -> list[str]: ...
    def call(self, endpoint: str, /, *, cache: _Cache = None, **params: _ParamValue) -> Any:
        """One endpoint: a dict, or a lazy iterator over every page when the payload is a list."""
    def get(
        self, path: str, params: _Params | None = None, headers: _HeaderPairs | None = None, *, cache: _Cache = None
    ) -> Any:
        """The decoded JSON of one GET relative to the base URL."""
    def paginate(
        self, path: str, params: _Params | None = None, limit: int | None = None, result: str | None = None, *,
        cache: _Cache = None,
    ) -> PageIterator[Any]:
        """Every item of every page; ``result`` is the JSON path of the list in each page."""
    def as_account(self, label: str) -> Self:
        """A client of the same plugin using the stored account ``label``."""
    def __getattr__(self, name: str) -> Any:
        """An endpoint declared in plugin.toml, or a function of plugin.py."""

plugins: Mapping[str, PluginClient]
"""The loaded plugins: name -> client."""

def client(name: str) -> PluginClient:
    """The client of the plugin called ``name`` (ImportError if it failed to load, LookupError if none)."""

# -- helpers --------------------------------------------------------------------------------

@overload
def map(
    func: Callable[[_T], _R], items: Iterable[_T], concurrency: int = 8, *, return_exceptions: Literal[False] = False
) -> list[_R]:
    """``func(item)`` for every item, up to ``concurrency`` at once; results in input order."""

@overload
def map(
    func: Callable[[_T], _R], items: Iterable[_T], concurrency: int = 8, *, return_exceptions: Literal[True]
) -> list[_R | Exception]:
    """As above; a call that raised gives its exception in the list instead of raising it."""

def sleep(seconds: float) -> None:
    """Waits without holding the GIL; Ctrl-C and the macro timeout interrupt it."""

def output(
    rows: Iterable[Any],
    columns: Iterable[str] | None = None,
    format: str | None = None,
    file: IO[str] | None = None,
    to: str | None = None,
    table: str | None = None,
    key: str | Sequence[str] | None = None,
    mode: Literal["append", "replace"] = "append",
) -> None:
    """Prints rows (dicts) as a table, json, csv or ndjson (--format, else table on a terminal, else json).

    With ``to`` (or ``run --output FILE``), writes them instead when the run succeeds: upserted
    into ``table`` of a SQLite file (``.db``, ``.sqlite``) by ``key``, or appended to a ``.csv`` or
    ``.jsonl`` file (``mode="replace"`` rewrites it)."""

class _State(MutableMapping[str, Any]):
    """This macro's state between runs: str keys, JSON values (str, int, float, bool, None, lists, dicts)."""

    def commit(self) -> None:
        """Commits the state and the rows staged so far now, before the run ends."""

state: _State

def incremental(
    items: Iterable[_T],
    cursor: str = "updated_at",
    key: str = "issues",
    initial: Any = None,
    lag: float | datetime.timedelta | None = None,
    primary_key: str = "id",
) -> Iterator[_T]:
    """Yields only the items whose cursor is past the bookmark in ``state[key]``, moving it as they go."""

# -- checks of what came back -----------------------------------------------------------------

class CheckFailed(AssertionError):
    """A check made with ``fatal=True`` failed: the macro stops there."""

def check(name: str, passed: object, seen: object = None, fatal: bool = False) -> bool:
    """Records the check ``name``: whether it ``passed`` and what was ``seen``; returns ``passed``.
    A failed check does not stop the macro but makes the run exit 1, and is printed at the end
    with what was seen (redacted); ``fatal=True`` raises ``CheckFailed`` at once."""

def check_equal(name: str, seen: object, expected: object, fatal: bool = False) -> bool:
    """``check(name, seen == expected, seen)``; the expected value is shown when it fails."""

def check_in(name: str, seen: object, allowed: object, fatal: bool = False) -> bool:
    """``check(name, seen in allowed, seen)``."""

def check_status(
    response: Response, expected: int | Iterable[int] = 200, name: str | None = None, fatal: bool = False
) -> bool:
    """Checks a response's status: one code or several (``(200, 201)``); named ``status of URL``
    unless ``name`` says otherwise."""

_F = TypeVar("_F", bound=Callable[..., Any])

def writes(func: _F) -> _F:
    """Marks a macro's ``main`` as one that writes: ``apimacro mcp`` offers it only with
    ``--allow-writes``, marked destructive."""

def format_rows(
    rows: Iterable[Any],
    columns: Iterable[str] | None = None,
    format: str = "table",
    width: int | None = None,
    color: bool = False,
) -> str:
    """Renders rows to a string without printing (see ``output``); ``width`` fits a table in that
    many terminal cells, ``color`` paints it as a terminal shows it."""
