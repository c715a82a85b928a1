"""Who follows a user (or whom they follow), with profile URLs."""
import apimacro
from apimacro import github


def main(login: str = "octocat", following: bool = False, limit: int = 50) -> None:
    """List up to LIMIT followers of LOGIN (or, with --following, the users LOGIN follows)."""
    people = github.following(login, limit=limit) if following else github.followers(login, limit=limit)
    apimacro.output([{"login": p["login"], "profile": p.get("html_url", "")} for p in people])
