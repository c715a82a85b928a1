"""A repository's open issues with their labels, through GitHub's GraphQL API."""
import apimacro
from apimacro import github

QUERY = """
query($owner: String!, $name: String!, $pageSize: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    issues(states: OPEN, first: $pageSize, after: $cursor, orderBy: {field: CREATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes { number title url labels(first: 20) { nodes { name } } }
    }
  }
}
"""


def main(repo: str = "octokit-fixture-org/paginate-issues", limit: int = 50, page_size: int = 50) -> None:
    """List up to LIMIT open issues of REPO (OWNER/NAME), PAGE_SIZE a request, with their labels."""
    owner, _, name = repo.partition("/")
    if not owner or not name:
        raise SystemExit(f"--repo must be OWNER/NAME, not {repo!r}")
    issues = github.graphql_paginate(QUERY, "repository.issues", limit=limit, owner=owner, name=name,
                                     pageSize=max(1, min(page_size, 100)))
    try:
        rows = [
            {"number": issue["number"], "title": issue["title"],
             "labels": ", ".join(label["name"] for label in issue["labels"]["nodes"]), "url": issue["url"]}
            for issue in issues
        ]
    except apimacro.Unauthorized:
        raise SystemExit("GitHub's GraphQL API needs a token: set APIMACRO_GITHUB_TOKEN or GITHUB_TOKEN")
    except apimacro.GraphQLError as error:
        raise SystemExit(f"{repo}: {error}")
    apimacro.output(rows)
