"""Who follows me on Instagram, with their profile pictures (the "InstAFN" first screen).

Legacy: the v1 API's follower lists (shut down in 2020; the Graph API has only counts). Runs with
APIMACRO_INSTAGRAM_URL=https://api.instagram.com/v1, against a recording or a server of that shape.
"""
import apimacro
from apimacro import instagram


def main(limit: int = 100) -> None:
    """List up to LIMIT of my followers: username, full name, profile picture URL."""
    try:
        followers = list(instagram.followed_by(limit=limit))
    except apimacro.AuthError as error:
        # No token, and no recording to answer (--replay needs none): say how to log in.
        raise SystemExit(str(error))
    apimacro.output(
        [
            {
                "username": person["username"],
                "name": person.get("full_name") or " ".join(filter(None, [person.get("first_name"), person.get("last_name")])),
                "picture": person.get("profile_picture", ""),
            }
            for person in followers
        ]
    )
