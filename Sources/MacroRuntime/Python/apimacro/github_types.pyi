"""The shapes of GitHub's answers, for type checkers: GitHub REST API 2022-11-28 (the default).

``apimacro stubs --install`` writes this module for the API version in use
(``APIMACRO_GITHUB_API_VERSION``, or ``--github-api-version``): 2022-11-28 or 2026-03-10.
Generated from GitHub's OpenAPI description by scripts/gen-github-types.
"""

from apimacro._github_2022_11_28 import *
