import Foundation

/// The APIs of the shipped plugins (plugins/openweather, plugins/foursquare,
/// plugins/hackernews) and of the README's "Write a plugin" example
/// (chucknorris), each under its own prefix so a plugin's base URL is
/// `<baseURL>/<prefix>`.
///
/// - `/openweather/data/2.5`: `GET find?q=&type=accurate|like&cnt=&units=&appid=` answers
///   `{"message","cod":"200","count","list":[city weather]}`; the cities are built from the recorded
///   5-day forecast (`openweather/openhab-combined_forecast_5day.json`: Altstadt, DE), whose slots
///   share the current-weather shapes, plus two more cities made from later slots.
///   `GET forecast?q=` serves the recording. `ow-test-key` is the only valid `appid`; others get
///   OpenWeather's 401 `{"cod":401,"message":"Invalid API key. …"}`.
/// - `/foursquare/v2`: `GET venues/search?near=|ll=&query=&limit=&v=&oauth_token=` in the
///   `{"meta":{"code":200},"response":{"venues":[…]}}` envelope (Brooklyn: the 2015 recording's 4
///   venues; Nashville: the 2011 recording's 30), `GET venues/{id}` → `response.venue`. Needs
///   `oauth_token=fsq-token-1` (else 401 `invalid_auth`) and `v` (else 400 `param_error`).
/// - `/hn/api/v1`: Hacker News search by Algolia, no auth: `GET search?query=&page=&hitsPerPage=`
///   (45 generated hits, pages from 0, an empty `hits` past the last page), `search_by_date`,
///   `items/{id}` (404 `{"status":404,"error":"Not Found"}` for unknown ids).
/// - `/chucknorris/jokes`: `GET random?category=`, `GET search?query=` → `{"total","result":[…]}`.
struct PluginRoutes: RouteHandler {
    static let openWeatherKey = "ow-test-key"
    static let foursquareToken = "fsq-token-1"

    func respond(to request: RouteRequest) -> Response? {
        do {
            if request.match("GET", "/openweather/data/2.5/find") != nil { return try OpenWeather.find(request) }
            if request.match("GET", "/openweather/data/2.5/forecast") != nil {
                return try OpenWeather.forecast(request)
            }
            if request.match("GET", "/foursquare/v2/venues/search") != nil { return try Foursquare.search(request) }
            if let id = request.match("GET", "/foursquare/v2/venues/{id}")?["id"] {
                return try Foursquare.venue(id, request)
            }
            if request.match("GET", "/hn/api/v1/search") != nil { return HackerNews.search(request, byDate: false) }
            if request.match("GET", "/hn/api/v1/search_by_date") != nil {
                return HackerNews.search(request, byDate: true)
            }
            if let id = request.match("GET", "/hn/api/v1/items/{id}")?["id"] { return HackerNews.item(id) }
            if request.match("GET", "/chucknorris/jokes/search") != nil { return ChuckNorris.search(request) }
            if request.match("GET", "/chucknorris/jokes/random") != nil { return ChuckNorris.random(request) }
        } catch {
            return .message("fixture unavailable: \(error)", status: 500)
        }
        return nil
    }
}

/// OpenWeather 2.5 answers built from the recorded forecast.
private enum OpenWeather {
    static func refusal(_ request: RouteRequest) -> Response? {
        guard request.query["appid"] != PluginRoutes.openWeatherKey else { return nil }
        return .json(
            .object([
                ("cod", .int(401)),
                (
                    "message",
                    .string("Invalid API key. Please see https://openweathermap.org/faq#error401 for more info.")
                ),
            ]), status: 401)
    }

    static func recording() throws -> JSON {
        try JSON(parsing: TestServer.fixture("openweather/openhab-combined_forecast_5day.json"))
    }

    /// Three cities: the recording's own (slot 0) and two made from later slots.
    static func cities() throws -> [JSON] {
        let recording = try recording()
        let slots = recording["list"]?.arrayValue ?? []
        let city = recording["city"] ?? .object([])
        let made: [(Int, String, String, String, String, Int)] = [
            (6_940_463, "Altstadt", "DE", "48.1374", "11.5755", 0),
            (7_287_650, "Altstadt", "CH", "47.0505", "8.3064", 8),
            (6_940_464, "Altstadt-Lehel", "DE", "48.1374", "11.5858", 16),
        ]
        return made.compactMap { id, name, country, lat, lon, index in
            guard slots.indices.contains(index) else { return nil }
            let slot = slots[index]
            let coord: JSON =
                index == 0 ? (city["coord"] ?? .null) : .object([("lat", .number(lat)), ("lon", .number(lon))])
            return .object([
                ("id", .int(id)), ("name", .string(name)), ("coord", coord),
                ("main", slot["main"]?.removing("temp_kf") ?? .null),
                ("dt", slot["dt"] ?? .null), ("wind", slot["wind"] ?? .null),
                ("sys", .object([("country", .string(country))])),
                ("rain", slot["rain"] ?? .null), ("snow", .null), ("clouds", slot["clouds"] ?? .null),
                ("weather", slot["weather"] ?? .array([])),
            ])
        }
    }

    static func find(_ request: RouteRequest) throws -> Response {
        if let refusal = refusal(request) { return refusal }
        guard let q = request.query["q"], !q.isEmpty else {
            return .json(.object([("cod", .string("400")), ("message", .string("Nothing to geocode"))]), status: 400)
        }
        let parts = q.split(separator: ",", maxSplits: 1).map { $0.trimmed(of: " ").lowercased() }
        let like = request.query["type"] == "like"
        var list = try cities().filter { city in
            let name = city["name"]?.stringValue?.lowercased() ?? ""
            let country = (city["sys"]?["country"]?.stringValue ?? "").lowercased()
            let nameMatches = like ? name.hasPrefix(parts[0]) : name == parts[0]
            return nameMatches && (parts.count < 2 || parts[1] == country)
        }
        if let count = request.queryInt("cnt"), count >= 0 { list = Array(list.prefix(count)) }
        if request.query["units"] == "metric" { list = list.map(celsius) }
        return .json(
            .object([
                ("message", .string(like ? "like" : "accurate")), ("cod", .string("200")), ("count", .int(list.count)),
                ("list", .array(list)),
            ]))
    }

    static func forecast(_ request: RouteRequest) throws -> Response {
        if let refusal = refusal(request) { return refusal }
        guard (request.query["q"] ?? "").lowercased().hasPrefix("altstadt") else {
            return .json(.object([("cod", .string("404")), ("message", .string("city not found"))]), status: 404)
        }
        return .json(try recording())
    }

    /// `units=metric`: the temperatures in °C instead of kelvin.
    static func celsius(_ city: JSON) -> JSON {
        guard var main = city["main"] else { return city }
        for key in ["temp", "feels_like", "temp_min", "temp_max"] {
            if case .number(let text)? = main[key], let kelvin = Double(text) {
                main = main.setting(key, .number(String(format: "%.2f", kelvin - 273.15)))
            }
        }
        return city.setting("main", main)
    }
}

/// Foursquare v2 answers built from the recorded venue searches.
private enum Foursquare {
    static func error(_ code: Int, _ type: String, _ detail: String) -> Response {
        .json(
            .object([
                (
                    "meta",
                    .object([("code", .int(code)), ("errorType", .string(type)), ("errorDetail", .string(detail))])
                ),
                ("response", .object([])),
            ]), status: code)
    }

    static func refusal(_ request: RouteRequest) -> Response? {
        guard request.query["oauth_token"] == PluginRoutes.foursquareToken else {
            return error(401, "invalid_auth", "OAuth token invalid or revoked.")
        }
        guard let version = request.query["v"], version.count == 8, Int(version) != nil else {
            return error(400, "param_error", "Missing or invalid version parameter v (YYYYMMDD)")
        }
        return nil
    }

    /// Every recorded venue: Brooklyn (2015) then Nashville (2011).
    static func venues() throws -> [(city: String, venue: JSON)] {
        let brooklyn = try JSON(parsing: TestServer.fixture("foursquare/foursquare4j-venues.json"))
        let nashville = try JSON(parsing: TestServer.fixture("foursquare/foursquare2-search_venues.json"))
        let groups = nashville["response"]?["groups"]?.arrayValue ?? []
        return (brooklyn["response"]?["venues"]?.arrayValue ?? []).map { ("brooklyn", $0) }
            + groups.flatMap { $0["items"]?.arrayValue ?? [] }.map { ("nashville", $0) }
    }

    static func envelope(_ response: JSON) -> Response {
        .json(
            .object([
                ("meta", .object([("code", .int(200)), ("requestId", .string("5ac51d7e6a607143d811cecb"))])),
                ("response", response),
            ]))
    }

    static func search(_ request: RouteRequest) throws -> Response {
        if let refusal = refusal(request) { return refusal }
        let near = (request.query["near"] ?? "").lowercased()
        let ll = request.query["ll"] ?? ""
        guard !near.isEmpty || !ll.isEmpty else {
            return error(400, "param_error", "Must provide parameter ll or near")
        }
        let city =
            near.contains("brooklyn") || ll.hasPrefix("40.")
            ? "brooklyn" : near.contains("nashville") || ll.hasPrefix("36.") ? "nashville" : nil
        guard let city else { return error(400, "failed_geocode", "Couldn't geocode param near: \(near)") }
        let query = (request.query["query"] ?? "").lowercased()
        var venues = try venues().filter { $0.city == city }.map(\.venue).filter { venue in
            guard !query.isEmpty else { return true }
            let names =
                [venue["name"]?.stringValue] + (venue["categories"]?.arrayValue ?? []).map { $0["name"]?.stringValue }
            return names.compactMap { $0?.lowercased() }.contains { $0.contains(query) }
        }
        if let limit = request.queryInt("limit"), limit > 0 { venues = Array(venues.prefix(limit)) }
        return envelope(.object([("venues", .array(venues))]))
    }

    static func venue(_ id: String, _ request: RouteRequest) throws -> Response {
        if let refusal = refusal(request) { return refusal }
        guard let venue = try venues().map(\.venue).first(where: { $0["id"]?.stringValue == id }) else {
            return error(400, "param_error", "Value \(id) is invalid for venue id")
        }
        return envelope(.object([("venue", venue)]))
    }
}

/// Hacker News search by Algolia: generated stories, pages from 0.
private enum HackerNews {
    static let total = 45

    static func hit(_ number: Int, query: String) -> JSON {
        let id = 40_000_000 + number
        let created = 1_700_000_000 + number * 3600
        let date = Date(timeIntervalSince1970: TimeInterval(created))
        return .object([
            ("objectID", .string(String(id))), ("title", .string("\(query.isEmpty ? "Story" : query) story \(number)")),
            ("url", .string("https://example.com/\(URLCoding.percentEncode(query))/\(number)")),
            ("author", .string("user\(number % 7)")), ("points", .int((number * 37) % 500)),
            ("num_comments", .int(number % 50)), ("created_at", .string(ISO8601DateFormatter().string(from: date))),
            ("created_at_i", .int(created)), ("story_id", .int(id)),
            ("_tags", .array([.string("story"), .string("author_user\(number % 7)"), .string("story_\(id)")])),
        ])
    }

    static func search(_ request: RouteRequest, byDate: Bool) -> Response {
        let query = request.query["query"] ?? ""
        let perPage = max(1, min(1000, request.queryInt("hitsPerPage") ?? 20))
        let page = max(0, request.queryInt("page") ?? 0)
        var numbers = Array(1...total)
        if byDate { numbers.reverse() }
        let start = min(numbers.count, page * perPage)
        let hits = numbers[start..<min(numbers.count, start + perPage)].map { hit($0, query: query) }
        return .json(
            .object([
                ("hits", .array(hits)), ("nbHits", .int(total)), ("page", .int(page)),
                ("nbPages", .int((total + perPage - 1) / perPage)), ("hitsPerPage", .int(perPage)),
                ("query", .string(query)), ("params", .string(request.recorded.rawQuery)),
            ]))
    }

    static func item(_ id: String) -> Response {
        guard let number = Int(id).map({ $0 - 40_000_000 }), (1...total).contains(number) else {
            return .json(.object([("status", .int(404)), ("error", .string("Not Found"))]), status: 404)
        }
        let story = hit(number, query: "")
        return .json(
            .object([
                ("id", .int(40_000_000 + number)), ("created_at", story["created_at"] ?? .null),
                ("type", .string("story")),
                ("author", story["author"] ?? .null), ("title", story["title"] ?? .null),
                ("url", story["url"] ?? .null),
                ("text", .null), ("points", story["points"] ?? .null), ("parent_id", .null), ("children", .array([])),
            ]))
    }
}

/// api.chucknorris.io: a handful of facts (test data).
private enum ChuckNorris {
    static let facts: [(String, String, String)] = [
        ("dev", "a1", "Chuck Norris writes code that optimizes itself."),
        ("dev", "a2", "Chuck Norris can compile syntax errors."),
        ("dev", "a3", "Chuck Norris's code never needs a code review."),
        ("science", "a4", "Chuck Norris can divide by zero."),
        ("sport", "a5", "Chuck Norris once won a game of chess in one move."),
    ]

    static func joke(_ fact: (String, String, String)) -> JSON {
        .object([
            ("categories", .array([.string(fact.0)])), ("created_at", .string("2020-01-05 13:42:19.576875")),
            ("icon_url", .string("https://api.chucknorris.io/img/avatar/chuck-norris.png")), ("id", .string(fact.1)),
            ("updated_at", .string("2020-01-05 13:42:19.576875")),
            ("url", .string("https://api.chucknorris.io/jokes/\(fact.1)")),
            ("value", .string(fact.2)),
        ])
    }

    static func search(_ request: RouteRequest) -> Response {
        let query = (request.query["query"] ?? "").lowercased()
        guard (3...120).contains(query.count) else {
            return .json(
                .object([
                    ("status", .int(400)), ("error", .string("Bad Request")),
                    ("message", .string("search.query: size must be between 3 and 120")),
                ]), status: 400)
        }
        let found = facts.filter { $0.2.lowercased().contains(query) }.map(joke)
        return .json(.object([("total", .int(found.count)), ("result", .array(found))]))
    }

    static func random(_ request: RouteRequest) -> Response {
        let category = request.query["category"]
        guard let fact = facts.first(where: { category == nil || $0.0 == category }) else {
            return .json(
                .object([
                    ("status", .int(404)), ("error", .string("Not Found")),
                    ("message", .string("No jokes for category \"\(category ?? "")\" found.")),
                ]),
                status: 404)
        }
        return .json(joke(fact))
    }
}
