"""Current weather in the cities matching a name (OpenWeather; needs APIMACRO_OPENWEATHER_KEY)."""
import apimacro


def main(city: str = "London", like: bool = False, count: int = 5, units: str = "metric") -> None:
    """One row per matching city: name, country, temperature, humidity, weather and wind.

    --like matches names that start with CITY; units is metric (°C), imperial (°F) or standard (K).
    """
    weather = apimacro.client("openweather")
    rows = []
    for place in weather.find(q=city, type="like" if like else "accurate", cnt=count, units=units):
        conditions = place.get("weather") or [{}]
        rows.append({
            "city": place["name"],
            "country": place.get("sys", {}).get("country", ""),
            "temp": place["main"]["temp"],
            "humidity": place["main"].get("humidity"),
            "weather": conditions[0].get("description", ""),
            "wind_m_s": place.get("wind", {}).get("speed"),
        })
    if not rows:
        raise SystemExit(f"no city named {city!r} (try --like)")
    apimacro.output(rows)
