"""Tracebacks without apimacro's own Python frames.

The Python the host executes into ``_apimacro`` (a plugin endpoint's method, ``get``,
``client``, the GraphQL helpers, ``map``'s thread pool...) is compiled as ``<_apimacro>``, the
package's glue as ``<apimacro>``: frames a macro's author cannot read or act on. The host
unlinks them from an exception's traceback, and from those of the exceptions chained to it
(``raise ... from``, an exception raised while handling another, an ExceptionGroup's members),
before it prints one: ``apimacro run`` (MacroRunner) and the REPL. pytest hides them itself
(each function sets ``__tracebackhide__``).
"""

INTERNAL = ("<apimacro>", "<_apimacro>")


def _internal(entry):
    return entry.tb_frame.f_code.co_filename in INTERNAL


def _trimmed(traceback):
    """The traceback without internal entries (unlinked in place); unchanged if all are internal."""
    head = traceback
    while head is not None and _internal(head):
        head = head.tb_next
    if head is None:
        return traceback
    entry = head
    while entry.tb_next is not None:
        if _internal(entry.tb_next):
            entry.tb_next = entry.tb_next.tb_next
        else:
            entry = entry.tb_next
    return head


def hide_internal(exception):
    """Unlinks apimacro's own frames from ``exception``'s traceback and its chain's; returns it."""
    seen = set()
    pending = [exception]
    while pending:
        current = pending.pop()
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        seen.add(id(current))
        if current.__traceback__ is not None:
            current.__traceback__ = _trimmed(current.__traceback__)
        pending += [current.__cause__, current.__context__]
        pending += list(getattr(current, "exceptions", ()) or ())
    return exception
