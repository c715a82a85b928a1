# Checks a decoded GitHub GraphQL answer and walks a connection (used by
# ``github.graphql`` and ``github.graphql_paginate``).
#
# Not a module to import: at start-up the host reads this file and executes it
# in the namespace of ``_apimacro`` (GitHubBinding.GraphQL.install), where ``ParseError`` and ``GraphQLError`` are already defined.
#

def _graphql_clean(text, limit=500):
    """A server's text made safe to print: no control characters, at most `limit` characters."""
    text = "".join(c if c.isprintable() else " " for c in str(text))
    return text if len(text) <= limit else text[:limit] + "..."

def _graphql_message(errors):
    first = errors[0]
    message = first.get("message") if isinstance(first, dict) else None
    message = _graphql_clean(message if isinstance(message, str) and message else repr(first))
    if isinstance(first, dict) and isinstance(first.get("type"), str):
        message += f" ({_graphql_clean(first['type'], 60)})"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    return message

def _graphql_data(payload, status, url, body):
    """The answer's data, or GraphQLError when it holds errors."""
    if not isinstance(payload, dict) or not ("data" in payload or "errors" in payload):
        raise ParseError(f"{url} answered {status} with JSON that is not a GraphQL response (no 'data' or 'errors')",
                         status=status, url=url, api="github", body=body)
    errors = payload.get("errors")
    if errors:
        if not isinstance(errors, list):
            errors = [errors]
        raise GraphQLError(_graphql_message(errors), errors=errors, data=payload.get("data"),
                           status=status, url=url, api="github", body=body)
    return payload.get("data")

def _graphql_page(payload, path, status, url, body):
    """[nodes, next cursor or None] of the connection at `path` (a cursor this iteration has
    sent before is refused by the page iterator's history, PageHistory)."""
    node = _graphql_data(payload, status, url, body)
    keys = path.split(".")
    if keys[0] == "data" and len(keys) > 1:
        keys = keys[1:]
    walked = []
    for key in keys:
        walked.append(key)
        if not isinstance(node, dict) or key not in node:
            where = ".".join(walked[:-1]) or "data"
            have = ", ".join(sorted(map(str, node))) if isinstance(node, dict) else ("null" if node is None else type(node).__name__)
            raise ValueError(f"graphql_paginate: the answer has no {'.'.join(walked)!r} ({where} holds: {have}); "
                             "path names the connection, e.g. 'repository.issues'")
        node = node[key]
    if not isinstance(node, dict):
        raise ValueError(f"graphql_paginate: {path!r} is {'null' if node is None else type(node).__name__} in the answer, "
                         "not a connection with pageInfo and nodes")
    info = node.get("pageInfo")
    if not isinstance(info, dict) or "hasNextPage" not in info or "endCursor" not in info:
        raise ValueError(f"graphql_paginate: {path} has no pageInfo {{ hasNextPage endCursor }}: add it to the query")
    if isinstance(node.get("nodes"), list):
        items = node["nodes"]
    elif isinstance(node.get("edges"), list):
        items = [edge.get("node") if isinstance(edge, dict) else None for edge in node["edges"]]
    else:
        raise ValueError(f"graphql_paginate: {path} has neither nodes nor edges: select nodes {{ ... }} or edges {{ node {{ ... }} }}")
    if info["hasNextPage"] is not True:
        return [items, None]
    cursor = info["endCursor"]
    if not isinstance(cursor, str) or not cursor:
        raise ParseError(f"{url}: {path}.pageInfo has hasNextPage but no endCursor", status=status, url=url, api="github", body=body)
    return [items, cursor]
