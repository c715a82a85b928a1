"""Counts a user's followers, page by page (the pagination memory benchmark)."""
from apimacro import github


def main(login):
    print(sum(1 for _ in github.followers(login)))
