"""Venues near a place from Foursquare (log in first: apimacro login foursquare)."""
import apimacro


def main(near: str = "Brooklyn, NY", query: str = "", limit: int = 10) -> None:
    """One row per venue near NEAR (optionally matching --query): name, category, address, distance."""
    foursquare = apimacro.client("foursquare")
    params = {"near": near, "limit": limit}
    if query:
        params["query"] = query
    rows = []
    for venue in foursquare.search_venues(**params):
        location = venue.get("location") or {}
        categories = venue.get("categories") or [{}]
        rows.append({
            "name": venue["name"],
            "category": categories[0].get("name", ""),
            "address": location.get("address", ""),
            "city": location.get("city", ""),
            "distance_m": location.get("distance"),
        })
    apimacro.output(rows)
