"""Shorten every link in a text file (Bitly by default) and print each old URL with its new one."""
import functools
import os
import re

import apimacro
from apimacro import shortener

# An http(s) URL inside prose: up to the first space, quote or closing bracket; a trailing
# full stop or comma is punctuation, not part of the link.
LINK = re.compile(r"""https?://[^\s<>"'()\[\]]+""")


def links(text: str) -> list[str]:
    """The distinct links in TEXT, in the order they first appear."""
    found = [match.rstrip(".,;:!?") for match in LINK.findall(text)]
    return list(dict.fromkeys(found))


def main(file: str = "", domain: str = "") -> None:
    """Shorten each link in FILE (default: shorten-file.txt beside this macro) once.

    DOMAIN picks a short domain of your account (Bitly: bit.ly by default). Bitly allows five
    requests in flight per address, and apimacro.map keeps to that.
    """
    path = file or os.path.join(os.path.dirname(os.path.abspath(__file__)), "shorten-file.txt")
    with open(path, encoding="utf-8") as text:
        urls = links(text.read())
    # A partial of a client method still runs natively in parallel under apimacro.map.
    shorten = functools.partial(shortener.shorten, domain=domain) if domain else shortener.shorten
    apimacro.output([{"old": url, "new": link["id"]} for url, link in zip(urls, apimacro.map(shorten, urls))])
