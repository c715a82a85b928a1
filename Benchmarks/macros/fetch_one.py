"""Start-up benchmark: fetch one user and print its login (run as a fresh process).

    apimacro run [--no-cache] fetch_one.py
"""
from apimacro import github

print(github.user("octocat")["login"])
