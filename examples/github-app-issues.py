"""Open issues and comment on them as a GitHub App's installation (or with the token set)."""
import apimacro
from apimacro import github


def main(repo: str = "octo/app-demo", title: str = "Nightly check failed", label: str = "ci",
         count: int = 1) -> None:
    """Open COUNT issues titled TITLE in REPO (OWNER/NAME), labelled LABEL, and comment on each.

    With APIMACRO_GITHUB_APP_ID and APIMACRO_GITHUB_APP_KEY set, apimacro acts as the App: it
    signs the App's JWT, finds the installation for REPO (or uses
    APIMACRO_GITHUB_INSTALLATION_ID) and renews the installation token as it expires. Without
    them it uses the token set (APIMACRO_GITHUB_TOKEN, GITHUB_TOKEN or gh's). Writes are paced
    to GitHub's secondary rate limits (a second apart).
    """
    owner, _, name = repo.partition("/")
    if not owner or not name:
        raise SystemExit(f"--repo must be OWNER/NAME, not {repo!r}")
    rows: list[dict[str, object]] = []
    try:
        for number in range(1, max(1, count) + 1):
            issue = github.post(f"/repos/{owner}/{name}/issues",
                                json={"title": title if count == 1 else f"{title} ({number})", "labels": [label]})
            comment = github.post(f"/repos/{owner}/{name}/issues/{issue['number']}/comments",
                                  json={"body": "Opened by an apimacro macro."})
            app = github.app
            rows.append({
                "number": issue["number"],
                "title": issue["title"],
                "labels": ", ".join(entry["name"] for entry in issue.get("labels", [])),
                "comment": comment["id"],
                "as": f"app {app['app_id']}, installation {app['installation_id']}" if app else "token",
                "url": issue.get("html_url", ""),
            })
    except apimacro.AuthError as error:
        raise SystemExit(f"GitHub refused the App's credentials: {error}")
    except apimacro.HTTPError as error:
        raise SystemExit(f"{repo}: {error}")
    apimacro.output(rows)
