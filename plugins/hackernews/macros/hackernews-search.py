"""The best Hacker News stories about a topic (Algolia search; no key needed)."""
import apimacro


def main(topic: str = "swift", scan: int = 50, top: int = 10) -> None:
    """Reads the first SCAN matching stories (page after page) and prints the TOP by points."""
    hackernews = apimacro.client("hackernews")
    stories = list(hackernews.search(query=topic, tags="story", limit=scan))
    stories.sort(key=lambda story: story.get("points") or 0, reverse=True)
    apimacro.output([
        {
            "points": story.get("points"),
            "comments": story.get("num_comments"),
            "title": story.get("title"),
            "url": story.get("url") or f"https://news.ycombinator.com/item?id={story['objectID']}",
        }
        for story in stories[:top]
    ])
