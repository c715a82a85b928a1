import Clients
import Foundation
import Testing
import WebAPI

@testable import PluginHost

/// A temporary folder of plugin folders, removed by `remove()`.
struct PluginFolder {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("apimacro-plugins-\(UUID().uuidString)")

    /// Writes `<url>/<plugin>/<file>`.
    @discardableResult
    func write(_ plugin: String, _ text: String, file: String = "plugin.toml") throws -> URL {
        let target = url.appendingPathComponent(plugin).appendingPathComponent(file)
        try FileManager.default.createDirectory(
            at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: target)
        return target
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

@Suite("plugin.toml: the manifest model and its strict validation")
struct ManifestTests {
    static let good = """
        name = "demo"
        description = "Demo API"
        base_url = "https://api.example.com/v1/"
        auth = { kind = "query_key", param = "appid", env = "APIMACRO_DEMO_KEY" }
        headers = { Accept = "application/json" }
        query = { v = "20180323" }
        pagination = { kind = "page_param", param = "page", first = 0 }
        errors = { message = "meta.errorDetail", code = "meta.code" }

        [endpoints.user]
        description = "One user."
        path = "/users/{id}/items"
        params = { id = "int!", kind = "string", q = "string!", ratio = "float", all = "bool" }
        result = "response.items"

        [endpoints.create]
        method = "post"
        path = "/things"
        params = { title = "string!" }

        [endpoints.feed]
        path = "/feed"
        response = "xml"
        """

    @Test("a good manifest: every key read, endpoints sorted, parameters required first")
    func goodManifest() throws {
        let folder = PluginFolder()
        defer { folder.remove() }
        try folder.write("demo", Self.good)
        let manifest = try PluginManifest.load(
            folder: folder.url.appendingPathComponent("demo"), reservedNames: builtInNames)
        #expect(manifest.name == "demo")
        #expect(manifest.baseURL == "https://api.example.com/v1")
        #expect(manifest.auth == .queryKey(param: "appid", env: "APIMACRO_DEMO_KEY"))
        #expect(manifest.headers.map { "\($0.0)=\($0.1)" } == ["Accept=application/json"])
        #expect(manifest.query.map { "\($0.0)=\($0.1)" } == ["v=20180323"])
        #expect(manifest.pagination == .pageParameter(name: "page", first: 0))
        #expect(manifest.errorMessage == ["meta", "errorDetail"])
        #expect(manifest.errorCode == ["meta", "code"])
        #expect(manifest.endpoints.map(\.name) == ["create", "feed", "user"])
        let user = try #require(manifest.endpoint("user"))
        #expect(user.parameters.map(\.name) == ["id", "q", "all", "kind", "ratio"])
        #expect(user.parameters.first == PluginParameter(name: "id", type: .int, required: true, inPath: true))
        #expect(user.result == ["response", "items"])
        #expect(user.signature == "user(id, q, all=None, kind=None, ratio=None, limit=None)")
        #expect(manifest.endpoint("create")?.method == "POST")
        #expect(manifest.endpoint("feed")?.response == .xml)
        #expect(manifest.environmentPrefix == "APIMACRO_DEMO")
    }

    /// A manifest with one line replaced or added, and the exact error (key, problem).
    struct Broken: Sendable, CustomStringConvertible {
        let label: String
        let text: String
        let key: String?
        let problem: String
        var description: String { label }
    }

    static let base = """
        name = "demo"
        description = "Demo API"
        base_url = "https://api.example.com"

        [endpoints.thing]
        path = "/things/{id}"
        params = { id = "string!" }
        """

    static func with(_ replacements: [(String, String)], adding extra: String = "") -> String {
        var text = base
        for (old, new) in replacements { text = text.replacingOccurrences(of: old, with: new) }
        return extra.isEmpty ? text : extra + "\n" + text
    }

    static let broken: [Broken] = [
        Broken(
            label: "unknown top-level key", text: with([("base_url =", "base_ur =")]), key: "base_ur",
            problem:
                "unknown key; did you mean base_url? a manifest takes name, description, base_url, auth, headers, query, pagination, errors, limits, endpoints"
        ),
        Broken(
            label: "missing name", text: with([("name = \"demo\"", "")]), key: "name",
            problem: "missing; write name = \"myapi\""),
        Broken(
            label: "name of the wrong type", text: with([("name = \"demo\"", "name = 3")]), key: "name",
            problem: "expected a string, found an integer; write name = \"myapi\""),
        Broken(
            label: "bad name", text: with([("name = \"demo\"", "name = \"Open-Weather\"")]), key: "name",
            problem:
                "\"Open-Weather\" is not a valid plugin name; use lowercase letters, digits and _, starting with a letter (e.g. \"open_weather\")"
        ),
        Broken(
            label: "a built-in client's name", text: with([("name = \"demo\"", "name = \"github\"")]), key: "name",
            problem: "\"github\" is a built-in client; choose another name (e.g. \"github_plugin\")"),
        Broken(
            label: "missing description", text: with([("description = \"Demo API\"", "")]), key: "description",
            problem: "missing; write description = \"What this API gives\""),
        Broken(
            label: "base_url not http", text: with([("https://api.example.com", "ftp://example.com")]), key: "base_url",
            problem: "\"ftp://example.com\" is not an http(s) URL; write base_url = \"https://api.example.com/v1\""),
        Broken(
            label: "unknown auth kind", text: with([], adding: "auth = { kind = \"oauth\" }"), key: "auth.kind",
            problem: "unknown kind \"oauth\"; use one of none, query_key, header_key, bearer, basic, oauth2_implicit"),
        Broken(
            label: "auth that is not a table", text: with([], adding: "auth = \"none\""), key: "auth",
            problem: "expected a table, found a string; write auth = { … } or a [auth] section"),
        Broken(
            label: "query_key without param",
            text: with([], adding: "auth = { kind = \"query_key\", env = \"APIMACRO_DEMO_KEY\" }"),
            key: "auth.param", problem: "missing; write param = \"api_key\""),
        Broken(
            label: "a key of another auth kind",
            text: with(
                [],
                adding:
                    "auth = { kind = \"query_key\", header = \"X-Key\", param = \"key\", env = \"APIMACRO_DEMO_KEY\" }"),
            key: "auth.header", problem: "unknown key; a query_key auth takes kind, param, env"),
        Broken(
            label: "a bad environment variable name",
            text: with([], adding: "auth = { kind = \"bearer\", env = \"my key\" }"),
            key: "auth.env",
            problem:
                "\"my key\" is not an environment variable name; use letters, digits and _ (e.g. \"APIMACRO_MYAPI_KEY\")"
        ),
        Broken(
            label: "oauth2_implicit without authorize_url",
            text: with([], adding: "auth = { kind = \"oauth2_implicit\" }"),
            key: "auth.authorize_url",
            problem: "missing; write authorize_url = \"https://example.com/oauth2/authenticate\""),
        Broken(
            label: "unknown pagination kind", text: with([], adding: "pagination = { kind = \"scroll\" }"),
            key: "pagination.kind",
            problem:
                "unknown kind \"scroll\"; use one of none, link_header, next_url, page_param, offset, cursor, header_cursor"
        ),
        Broken(
            label: "cursor without path", text: with([], adding: "pagination = { kind = \"cursor\", param = \"c\" }"),
            key: "pagination.path",
            problem:
                "missing; cursor pagination needs path = \"meta.next_cursor\" (where the next cursor is in the body)"),
        Broken(
            label: "header_cursor without param",
            text: with([], adding: "pagination = { kind = \"header_cursor\", header = \"X-Next\" }"),
            key: "pagination.param", problem: "missing; write param = \"cursor\""),
        Broken(
            label: "offset with a page size but no limit_param",
            text: with([], adding: "pagination = { kind = \"offset\", limit = 10 }"), key: "pagination.limit",
            problem: "needs limit_param, the query parameter it is sent as; write limit_param = \"limit\""),
        Broken(
            label: "offset with a zero page size",
            text: with([], adding: "pagination = { kind = \"offset\", limit_param = \"n\", limit = 0 }"),
            key: "pagination.limit",
            problem: "expected an integer of 1 or more, found an integer; write limit = 100 (the page size sent)"),
        Broken(
            label: "next_url without path", text: with([], adding: "pagination = { kind = \"next_url\" }"),
            key: "pagination.path",
            problem:
                "missing; next_url pagination needs path = \"pagination.next_url\" (where the next page's URL is in the body)"
        ),
        Broken(
            label: "page_param with a string first",
            text: with([], adding: "pagination = { kind = \"page_param\", param = \"page\", first = \"1\" }"),
            key: "pagination.first",
            problem: "expected an integer, found a string; write first = 1 (the number of the first page)"),
        Broken(
            label: "unknown errors key", text: with([], adding: "errors = { detail = \"x\" }"), key: "errors.detail",
            problem: "unknown key; errors takes message, code"),
        Broken(
            label: "a header that is not a string", text: with([], adding: "headers = { Accept = 1 }"),
            key: "headers.Accept",
            problem: "expected a string, found an integer; write headers = { Accept = \"application/json\" }"),
        Broken(
            label: "no endpoints",
            text: with([("[endpoints.thing]\npath = \"/things/{id}\"\nparams = { id = \"string!\" }", "")]),
            key: "endpoints",
            problem: "missing; declare at least one endpoint: [endpoints.NAME] with path = \"/things\""),
        Broken(
            label: "path parameter not declared", text: with([("params = { id = \"string!\" }", "")]),
            key: "endpoints.thing.path",
            problem: "path parameter {id} is not declared; add id = \"string!\" to endpoints.thing.params"),
        Broken(
            label: "optional path parameter", text: with([("id = \"string!\"", "id = \"string\"")]),
            key: "endpoints.thing.params.id",
            problem: "a path parameter is always required; write id = \"string!\""),
        Broken(
            label: "unknown parameter type",
            text: with([("{ id = \"string!\" }", "{ id = \"string!\", cnt = \"integer\" }")]),
            key: "endpoints.thing.params.cnt",
            problem: "unknown type \"integer\"; use string, int, float or bool, with ! for required (e.g. \"int!\")"),
        Broken(
            label: "parameter type that is not a string",
            text: with([("{ id = \"string!\" }", "{ id = \"string!\", cnt = 3 }")]),
            key: "endpoints.thing.params.cnt",
            problem:
                "expected a string, found an integer; write cnt = \"string\" (or int, float, bool; add ! when required)"
        ),
        Broken(
            label: "unknown endpoint key", text: with([("path =", "paht =")]), key: "endpoints.thing.paht",
            problem:
                "unknown key; did you mean path? an endpoint takes method, path, params, result, response, description, error_path, error_when"
        ),
        Broken(
            label: "unknown method", text: with([("[endpoints.thing]", "[endpoints.thing]\nmethod = \"FETCH\"")]),
            key: "endpoints.thing.method", problem: "unknown method \"FETCH\"; use GET, POST, PUT, PATCH or DELETE"),
        Broken(
            label: "path without a leading slash", text: with([("\"/things/{id}\"", "\"things/{id}\"")]),
            key: "endpoints.thing.path",
            problem: "\"things/{id}\" must start with /; write path = \"/things/{id}\""),
        Broken(
            label: "unknown response format",
            text: with([("[endpoints.thing]", "[endpoints.thing]\nresponse = \"yaml\"")]),
            key: "endpoints.thing.response", problem: "unknown response \"yaml\"; use json, xml or text"),
        Broken(
            label: "a result path with an empty key",
            text: with([("[endpoints.thing]", "[endpoints.thing]\nresult = \"a..b\"")]),
            key: "endpoints.thing.result",
            problem: "\"a..b\" is not a JSON path; write keys joined by dots (e.g. \"response.venues\")"),
        Broken(
            label: "a result path on an xml response",
            text: with([("[endpoints.thing]", "[endpoints.thing]\nresult = \"items\"\nresponse = \"xml\"")]),
            key: "endpoints.thing.result",
            problem: "only a json response has a result path; remove result or write response = \"json\""),
        Broken(
            label: "a reserved endpoint name", text: with([("[endpoints.thing]", "[endpoints.get]")]),
            key: "endpoints.get",
            problem:
                "\"get\" is reserved (every client has call, endpoints, get, name, paginate); rename the endpoint (e.g. \"get_item\")"
        ),
        Broken(
            label: "a bad endpoint name", text: with([("[endpoints.thing]", "[endpoints.Find-It]")]),
            key: "endpoints.Find-It",
            problem:
                "\"Find-It\" is not a valid endpoint name; use lowercase letters, digits and _, starting with a letter (e.g. \"find_it\")"
        ),
        Broken(
            label: "a duplicate endpoint", text: base + "\n\n[endpoints.thing]\npath = \"/other\"\n", key: nil,
            problem:
                "line 9: cannot redefine table 'endpoints.thing'; each key and each [endpoints.NAME] may appear once: rename or remove the second one"
        ),
        Broken(
            label: "a TOML syntax error", text: "name = \n" + base, key: nil,
            problem:
                "line 1: expected a value (a \"string\", a number, true, false, a date, [an array] or {an inline table}), "
                + "found the end of the line; fix the TOML syntax (strings in double quotes, one key = value per line)"
        ),
    ]

    @Test("each broken manifest gives one exact error naming the file and the key", arguments: broken)
    func brokenManifest(_ testCase: Broken) throws {
        let folder = PluginFolder()
        defer { folder.remove() }
        let file = try folder.write("demo", testCase.text)
        let error = try #require(throws: PluginError.self) {
            try PluginManifest.load(folder: file.deletingLastPathComponent(), reservedNames: builtInNames)
        }
        #expect(error.file == file.path)
        #expect(error.key == testCase.key)
        #expect(error.problem == testCase.problem)
        #expect(
            error.description == [file.path, testCase.key, testCase.problem].compactMap { $0 }.joined(separator: ": "))
    }

    @Test("a folder without plugin.toml says so")
    func missingManifest() throws {
        let folder = PluginFolder()
        defer { folder.remove() }
        try folder.write("empty", "not a plugin", file: "README.md")
        let error = try #require(throws: PluginError.self) {
            try PluginManifest.load(folder: folder.url.appendingPathComponent("empty"), reservedNames: builtInNames)
        }
        #expect(
            error.description == folder.url.appendingPathComponent("empty").path
                + ": no plugin.toml; a plugin folder holds plugin.toml (see \"Write a plugin\" in the README)")
    }

    @Test("every shipped manifest loads")
    func shippedManifests() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let registry = PluginRegistry.load(
            folders: [root.appendingPathComponent("plugins")], reservedNames: builtInNames)
        #expect(registry.failures.map(\.error.description) == [])
        #expect(registry.plugins.map(\.name) == ["foursquare", "hackernews", "openweather"])
        #expect(registry.plugins.allSatisfy { $0.macrosFolder != nil })
    }
}
