"""My most liked Instagram posts: the account's media sorted by likes, as a table.

The Instagram API with Instagram Login (a professional account): set APIMACRO_INSTAGRAM_TOKEN to
a token from the App Dashboard, or run `apimacro login instagram`.
"""
import apimacro
from apimacro import instagram

FIELDS = ["id", "caption", "media_type", "permalink", "timestamp", "like_count", "comments_count"]


def main(top: int = 10) -> None:
    """List the TOP posts with the most likes: date, likes, comments, type, caption, link."""
    posts = sorted(instagram.media(fields=FIELDS), key=lambda post: post.get("like_count") or 0, reverse=True)
    apimacro.output(
        [
            {
                "posted": post["timestamp"][:10],
                "likes": post.get("like_count") or 0,
                "comments": post.get("comments_count") or 0,
                "type": post["media_type"].lower(),
                "caption": " ".join((post.get("caption") or "").split())[:40],
                "link": post["permalink"],
            }
            for post in posts[:top]
        ]
    )
