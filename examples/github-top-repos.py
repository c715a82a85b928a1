"""A user's most-starred repositories, across every page of their repo list."""
import apimacro
from apimacro import github


def main(login: str = "octocat", top: int = 10, min_stars: int = 0, language: str = "") -> None:
    """List the TOP repositories of LOGIN by stars (optionally of one LANGUAGE)."""
    repos = [
        repo
        for repo in github.repos(login, type="owner")
        if repo.get("stargazers_count", 0) >= min_stars
        and (not language or (repo.get("language") or "").lower() == language.lower())
    ]
    repos.sort(key=lambda repo: repo.get("stargazers_count", 0), reverse=True)
    apimacro.output(
        [
            {
                "name": repo["name"],
                "stars": repo.get("stargazers_count", 0),
                "language": repo.get("language") or "",
                "url": repo.get("html_url", ""),
            }
            for repo in repos[:top]
        ]
    )
