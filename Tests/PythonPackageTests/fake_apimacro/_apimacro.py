"""Pure-Python stand-in for the native ``_apimacro`` module.

Used only when the package tests run under a plain ``/usr/bin/python3``
(put this folder on ``PYTHONPATH``).  It provides exactly the interface the
Swift host guarantees and nothing more, so the tests cannot come to rely on
something the real module lacks. Its exception classes are the real ones: the
package's ``_native_exceptions.py``, executed here as the host executes it.
"""

import time as _time

__version__ = "0.1.0"

# The host's --format flag value ("table", "json", "csv", "ndjson") or None.
default_format = None

# The host's --color choice ("auto", "always", "never"; NO_COLOR already folded in) and --wide.
color = "auto"
wide = False


def _redact(value):
    """The host's ``_redact`` replaces the secrets apimacro knows; a plain python3 knows none."""
    return value


def _define_exceptions():
    """Execute the package's ``_native_exceptions.py`` here, as the host does in ``_apimacro``."""
    import importlib.util

    folder = importlib.util.find_spec("apimacro").submodule_search_locations[0]
    path = folder + "/_native_exceptions.py"
    with open(path, encoding="utf-8") as file:
        exec(compile(file.read(), path, "exec"), globals())


_define_exceptions()


def sleep(seconds):
    """Sleep for ``seconds`` (the native version releases the GIL)."""
    _time.sleep(seconds)
