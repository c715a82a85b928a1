# ``apimacro macros list``: a macro's one-line help, read with ``ast`` (the macro
# is never run). A file that does not parse says so. Only regular files up to
# 1 MiB are read, opened without blocking (a FIFO, a device or a symlink to
# /dev/zero is listed as unreadable, with the reason).
#
# Not a module to import: the host reads this file and executes it in fresh
# globals (MacroCatalog.entries), then calls ``help_of(path)``.
#

import ast, os, stat

LIMIT = 1 << 20

def _read(path):
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        chunks, size = [], 0
        while size <= LIMIT:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > LIMIT:
        raise ValueError("larger than 1 MiB")
    return b"".join(chunks)

def help_of(path):
    try:
        tree = ast.parse(_read(path), path)
    except SyntaxError as error:
        return f"(does not parse: {error.msg}, line {error.lineno})"
    except OSError as error:
        return f"(cannot read: {error.strerror})"
    except ValueError as error:
        return f"(cannot read: {error})"
    doc = ast.get_docstring(tree)
    if not doc:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == 'main':
                doc = ast.get_docstring(node)
    lines = [line.strip() for line in (doc or '').splitlines() if line.strip()]
    return lines[0] if lines else ''
