"""Start-up peer: a fresh process that fetches one user with requests and prints its login.

    python fetch_one_requests.py BASE_URL
"""
import sys

import requests

r = requests.get(sys.argv[1] + "/users/octocat",
                 headers={"Accept": "application/vnd.github+json", "User-Agent": "apimacro-bench"})
r.raise_for_status()
print(r.json()["login"])
