"""Sync a repository's stargazers into SQLite incrementally: each run adds only the new ones."""
from collections.abc import Iterator
from typing import Any

import apimacro
from apimacro import github

# GitHub adds each stargazer's `starred_at` only with this media type.
STARRED = {"Accept": "application/vnd.github.star+json"}
PAGE = 100


def stargazers(repo: str, first_page: int) -> Iterator[dict[str, Any]]:
    """Every stargazer of REPO from page FIRST_PAGE on, oldest first; remembers the last page read."""
    page = first_page
    while True:
        batch: list[dict[str, Any]] = github.get(f"repos/{repo}/stargazers", params={"per_page": PAGE, "page": page}, headers=STARRED)
        if batch or page == first_page:
            apimacro.state[f"{repo} page"] = page
        yield from batch
        if len(batch) < PAGE:
            return
        page += 1


def main(repo: str = "octocat/Hello-World", db: str = "stars.db") -> None:
    """Add the stargazers of REPO who starred since the last run to the table `stars` of DB."""
    # GitHub cannot filter stargazers by date: start at the page the last run ended on (the
    # pages before it are unchanged, and an unchanged page costs a revalidation).
    first = apimacro.state.get(f"{repo} page", 1)
    since = apimacro.state.get(f"{repo} stars", {}).get("cursor")
    new = [
        {
            "id": star["user"]["id"],
            "login": star["user"]["login"],
            "starred_at": star["starred_at"],
            "repo": repo,
            "profile": star["user"]["html_url"],
        }
        for star in apimacro.incremental(
            stargazers(repo, first), cursor="starred_at", key=f"{repo} stars", primary_key="user.id"
        )
    ]
    apimacro.output(new, to=db, table="stars", key="id")
    # What this run added (the rows reach DB when the run ends well, with the bookmark).
    apimacro.output([{"repo": repo, "since": since, "new": len(new), "db": db, "table": "stars"}])
