"""Shorten every URL given as arguments (or one per line on stdin), then expand each to check the round trip."""
import sys

import apimacro
from apimacro import shortener


def main(*urls: str) -> None:
    """Shorten URLS (or stdin's lines) and check that each short URL expands back."""
    targets = list(urls) or [line.strip() for line in sys.stdin if line.strip()]
    rows = []
    for url in targets:
        try:
            short = shortener.shorten(url)["id"]
        except ValueError as error:
            rows.append({"url": url, "short": "", "round_trip": f"skipped: {error}"})
            continue
        back = shortener.expand(short)["longUrl"]
        rows.append({"url": url, "short": short, "round_trip": "ok" if back == url else f"MISMATCH: {back}"})
    apimacro.output(rows)
    if any(row["round_trip"] != "ok" for row in rows):
        raise SystemExit(1)
