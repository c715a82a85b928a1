"""Greet someone and show apimacro's output formats (runs offline)."""
import apimacro


def main(name: str = "world", times: int = 3) -> None:
    """Print a greeting table: one row per greeting, in any --format."""
    greetings = ["Hello", "Bonjour", "こんにちは"]
    rows = [
        {"n": i + 1, "greeting": f"{greetings[i % len(greetings)]}, {name}!", "length": len(name)}
        for i in range(times)
    ]
    apimacro.output(rows)
