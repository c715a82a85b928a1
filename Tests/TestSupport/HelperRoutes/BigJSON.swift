import Synchronization

/// `GET /big.json?mb=N`: a JSON array of user-like objects about N megabytes long, generated once
/// per size and cached for the whole process (with its ETag).
enum BigJSON {
    static let maximumMegabytes = 64.0
    private static let cache = Mutex<[Int: (body: [UInt8], etag: String)]>([:])

    static func response(megabytes text: String?) -> Response {
        let megabytes = text.flatMap(Double.init) ?? 1
        guard megabytes > 0, megabytes <= maximumMegabytes else {
            return .badRequest("mb must be more than 0 and at most \(Int(maximumMegabytes))")
        }
        let size = Int(megabytes * 1024 * 1024)
        let cached = cache.withLock { $0[size] } ?? generate(size: size)
        return Response(
            status: 200, headers: [("Content-Type", Response.jsonContentType)], body: cached.body, etag: cached.etag)
    }

    private static func generate(size: Int) -> (body: [UInt8], etag: String) {
        var body: [UInt8] = [UInt8(ascii: "[")]
        body.reserveCapacity(size + 2048)
        var number = 1
        while body.count < size {
            if number > 1 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: item(number).bytes)
            number += 1
        }
        body.append(UInt8(ascii: "]"))
        let entry = (body: body, etag: ETag.of(body))
        cache.withLock { $0[size] = entry }
        return entry
    }

    private static func item(_ number: Int) -> JSON {
        let id = 1_000_000 + number
        return .object([
            ("login", .string("user\(number)")),
            ("id", .int(id)),
            ("node_id", .string(GitHubObjects.nodeID("04:User\(id)"))),
            ("avatar_url", .string("https://avatars.githubusercontent.com/u/\(id)?v=4")),
            ("html_url", .string("https://github.com/user\(number)")),
            ("type", .string("User")),
            ("site_admin", .bool(false)),
            ("name", .string("User \(number)")),
            ("company", number % 3 == 0 ? .string("Company \(number % 50)") : .null),
            ("location", .string(["San Francisco", "Zürich", "東京", "Lagos"][number % 4])),
            ("bio", .string("Bio of user \(number): " + String(repeating: "lorem ipsum ", count: number % 20))),
            ("public_repos", .int(number % 97)),
            ("followers", .int((number * 7919) % 5000)),
            ("following", .int(number % 13)),
            ("created_at", .string("2011-01-25T18:44:36Z")),
        ])
    }
}
