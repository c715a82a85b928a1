"""Every result of a GitHub search, past the 1,000 results GitHub gives one query."""
from typing import Literal, cast

import apimacro
from apimacro import github

Kind = Literal["issues", "repositories", "code", "commits", "users"]
KINDS = ("issues", "repositories", "code", "commits", "users")


def main(query: str = "repo:cli/cli is:issue label:bug", kind: str = "issues", limit: int = 0, sort: str = "",
         order: str = "") -> None:
    """Search GitHub for QUERY (KIND: issues, repositories, code, commits or users) and list every result.

    GitHub gives at most 1,000 results per query; for issues and repositories apimacro splits a
    larger one by creation date and yields each result once. LIMIT (0: all) stops early; SORT
    and ORDER are GitHub's (sort=created, order=desc: newest first).
    """
    if kind not in KINDS:
        raise SystemExit(f"--kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if order not in ("", "asc", "desc"):
        raise SystemExit(f"--order must be asc or desc, not {order!r}")
    rows: list[dict[str, object]] = []
    results = github.search(cast(Kind, kind), query, limit=limit or None, sort=sort or None,
                            order=cast(Literal["asc", "desc"], order) if order else None)
    for item in results:
        rows.append({
            "number": item.get("number") or "",
            "title": item.get("title") or item.get("full_name") or item.get("login") or item.get("path") or "",
            "created_at": item.get("created_at") or "",
            "url": item.get("html_url") or item.get("url") or "",
        })
    apimacro.output(rows)
