"""Who follows me on Instagram, with their profile pictures (the "InstAFN" first screen)."""
import apimacro
from apimacro import instagram


def main(limit: int = 100) -> None:
    """List up to LIMIT of my followers: username, full name, profile picture URL."""
    if not instagram.logged_in:
        raise SystemExit("log in first: apimacro login instagram (or set APIMACRO_INSTAGRAM_TOKEN)")
    apimacro.output(
        [
            {
                "username": person["username"],
                "name": person.get("full_name") or " ".join(filter(None, [person.get("first_name"), person.get("last_name")])),
                "picture": person.get("profile_picture", ""),
            }
            for person in instagram.followed_by(limit=limit)
        ]
    )
