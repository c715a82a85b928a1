"""The shapes of GitHub's answers, for type checkers (see github_types.pyi).

Answers are plain dicts at run time, so every name here is ``dict``: an annotation such as
``def best(repo: MinimalRepository) -> int`` works when the macro runs, while mypy and pyright
read the TypedDicts in the stubs.
"""


def __getattr__(name: str) -> type:
    if name[:1].isupper():
        return dict
    raise AttributeError(f"module 'apimacro.github_types' has no attribute {name!r}")
