"""A GitHub user's profile card: the classic first screen of a GitHub app."""
import apimacro
from apimacro import github


def main(login: str = "octocat") -> None:
    """Show login, name, company, location, counts and avatar URL of one user."""
    try:
        user = github.user(login)
    except apimacro.NotFound:
        raise SystemExit(f"no GitHub user named {login!r}")
    card = {
        "login": user["login"],
        "name": user.get("name") or "",
        "company": user.get("company") or "",
        "location": user.get("location") or "",
        "public_repos": user.get("public_repos", 0),
        "followers": user.get("followers", 0),
        "following": user.get("following", 0),
        "avatar_url": user.get("avatar_url", ""),
    }
    apimacro.output([card])
