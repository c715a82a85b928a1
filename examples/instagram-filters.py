"""Which filters does a friend use? A histogram of their recent photos' filters.

Legacy: the v1 API's media had a `filter` (shut down in 2020). Runs with
APIMACRO_INSTAGRAM_URL=https://api.instagram.com/v1, against a recording or a server of that shape.
"""
import apimacro
from apimacro import instagram


def main(user_id: str = "self", photos: int = 100) -> None:
    """Count the filters of USER_ID's last PHOTOS photos, most used first."""
    counts: dict[str, int] = {}
    for media in instagram.recent_media(user_id, limit=photos):
        name = media.get("filter") or "Normal"
        counts[name] = counts.get(name, 0) + 1
    total = sum(counts.values()) or 1
    apimacro.output(
        [
            {"filter": name, "photos": count, "share": f"{100 * count / total:.0f}%", "bar": "#" * round(20 * count / total)}
            for name, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        ]
    )
