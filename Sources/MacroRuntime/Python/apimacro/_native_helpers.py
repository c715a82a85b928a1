# Small pure-Python parts of the native module: the case-insensitive headers
# mapping, ``get``/``post``, and ``map`` for callables that are not client methods.
#
# Not a module to import: at start-up the host reads this file and executes it
# in the namespace of ``_apimacro`` (ApimacroModule.install), where ``request`` and the exception classes are already defined.
#

import _collections_abc as _abc  # what collections.abc re-exports; already loaded, unlike collections

# pytest leaves out of its tracebacks the frames whose globals say so: every function of
# _apimacro's namespace (these, the plugins' glue, the GraphQL helpers) is apimacro's own.
__tracebackhide__ = True

class Headers(_abc.Mapping):
    """HTTP headers: a read-only mapping looked up without regard to case.

    Repeated headers are joined with ", "; get_all(name) lists them one by one.
    """
    def __init__(self, pairs=()):
        self._pairs = [(str(k), str(v)) for k, v in pairs]
        self._index = {}
        self._names = {}
        for key, value in self._pairs:
            lower = key.lower()
            if lower in self._index:
                self._index[lower] += ", " + value
            else:
                self._index[lower] = value
                self._names[lower] = key

    def __getitem__(self, key):
        return self._index[key.lower()]

    def __contains__(self, key):
        return isinstance(key, str) and key.lower() in self._index

    def __iter__(self):
        return iter(self._names.values())

    def __len__(self):
        return len(self._index)

    def get_all(self, key):
        lower = key.lower()
        return [v for k, v in self._pairs if k.lower() == lower]

    def __repr__(self):
        return f"Headers({dict(self.items())!r})"

Headers.__module__ = "apimacro"

def get(url, **kwargs):
    """get(url, **kwargs) -> Response: request("GET", url, **kwargs)."""
    return request("GET", url, **kwargs)

def post(url, **kwargs):
    """post(url, **kwargs) -> Response: request("POST", url, **kwargs)."""
    return request("POST", url, **kwargs)

def _map_threads(func, items, concurrency, return_exceptions=False):
    """map() for any callable: a pool of Python threads, results in input order, the first
    exception raised once the calls in flight have finished (no call starts after it).

    With return_exceptions, every call runs and a call that raised an Exception gives that
    exception object in its place; a BaseException that is no Exception (KeyboardInterrupt,
    MacroTimeout, SystemExit) still stops the map and is raised."""
    from concurrent.futures import ThreadPoolExecutor, FIRST_EXCEPTION, wait
    results = [None] * len(items)
    if not items:
        return results
    first_error = None
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        pending = {}
        position = 0
        while position < len(items) and len(pending) < concurrency:
            pending[pool.submit(func, items[position])] = position
            position += 1
        while pending:
            done, _ = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                index = pending.pop(future)
                error = future.exception()
                if error is None:
                    results[index] = future.result()
                elif return_exceptions and isinstance(error, Exception):
                    results[index] = error
                elif first_error is None:
                    first_error = error
            while first_error is None and position < len(items) and len(pending) < concurrency:
                pending[pool.submit(func, items[position])] = position
                position += 1
    if first_error is not None:
        raise first_error
    return results
