import Clients
import Platform
import WebAPI

/// Reads a parsed `plugin.toml` strictly: every unknown key, wrong type,
/// bad name or kind is a `PluginError` naming the file, the key and what to
/// write instead.
///
/// The only place that knows the manifest's keys.
struct ManifestReader {
    let file: String
    /// The built-in clients' names, which a plugin may not take (Clients' `BuiltInClients.names`).
    let reservedNames: Set<String>
    /// Client methods every plugin has, which an endpoint may not be named.
    static let reservedMethods: Set<String> = ["call", "get", "paginate", "endpoints", "name"]
    static let methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    static let topKeys = [
        "name", "description", "base_url", "auth", "headers", "query", "pagination", "errors", "limits", "endpoints",
    ]
    static let endpointKeys = [
        "method", "path", "params", "result", "response", "description", "error_path", "error_when",
    ]

    func fail(_ key: String?, _ problem: String) -> PluginError { PluginError(file: file, key: key, problem) }

    func read(_ text: String, folder: URL) throws -> PluginManifest {
        let root: [String: TOMLValue]
        do {
            root = try TOMLValue.parse(text)
        } catch let error as TOMLSyntaxError {
            var problem = "line \(error.line): \(error.message)"
            if error.message.contains("redefine") {
                problem += "; each key and each [endpoints.NAME] may appear once: rename or remove the second one"
            } else {
                problem += "; fix the TOML syntax (strings in double quotes, one key = value per line)"
            }
            throw fail(nil, problem)
        }
        // Every problem of the file at once, not one per run: each part is read on its own, and
        // a part that fails is reported with the others.
        var problems: [PluginError] = []
        func attempt<T>(_ read: () throws -> T) -> T? {
            do {
                return try read()
            } catch let error as PluginError {
                problems.append(error)
            } catch {
                problems.append(fail(nil, "\(error)"))
            }
            return nil
        }
        _ = attempt { try allowOnly(root, in: nil, keys: Self.topKeys, what: "a manifest") }
        let name = attempt { () throws -> String in
            let name = try string(root, "name", in: nil, example: "\"myapi\"")
            guard Self.isIdentifier(name) else {
                throw fail(
                    "name",
                    "\"\(name)\" is not a valid plugin name; use lowercase letters, digits and _, starting with a letter (e.g. \"\(Self.suggestedName(name))\")"
                )
            }
            guard !reservedNames.contains(name) else {
                throw fail("name", "\"\(name)\" is a built-in client; choose another name (e.g. \"\(name)_plugin\")")
            }
            return name
        }
        let description = attempt { try string(root, "description", in: nil, example: "\"What this API gives\"") }
        let baseURL = attempt { () throws -> String in
            let baseURL = try string(root, "base_url", in: nil, example: "\"https://api.example.com/v1\"")
            guard let components = URLComponents(string: baseURL),
                ["http", "https"].contains(components.scheme?.lowercased() ?? ""),
                !(components.host ?? "").isEmpty
            else {
                throw fail(
                    "base_url", "\"\(baseURL)\" is not an http(s) URL; write base_url = \"https://api.example.com/v1\"")
            }
            return baseURL
        }
        let errors = attempt { () throws -> [String: TOMLValue] in
            let errors = try table(root, "errors", in: nil) ?? [:]
            try allowOnly(errors, in: "errors", keys: ["message", "code"], what: "errors")
            return errors
        }
        let auth = attempt { try self.auth(root) }
        let headers = attempt { try strings(root, "headers", example: "{ Accept = \"application/json\" }") }
        let query = attempt { try strings(root, "query", example: "{ v = \"20240101\" }") }
        let pagination = attempt { try self.pagination(root) }
        let errorMessage = errors.flatMap { errors in attempt { try path(errors, "message", in: "errors") } }
        let errorCode = errors.flatMap { errors in attempt { try path(errors, "code", in: "errors") } }
        let limits = attempt { try self.limits(root) }
        let endpoints = self.endpoints(root, problems: &problems)
        guard problems.isEmpty, let name, let description, let baseURL, let auth, let headers, let query,
            let pagination, let errorMessage, let errorCode, let endpoints, let limits
        else { throw Self.combined(problems, file: file) }
        var manifest = PluginManifest(
            name: name, description: description,
            baseURL: baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL,
            auth: auth, headers: headers, query: query, pagination: pagination,
            errorMessage: errorMessage, errorCode: errorCode, endpoints: endpoints, folder: folder)
        manifest.limits = limits
        return manifest
    }

    /// One problem as it is; several as one error that lists them all, a line each.
    ///
    /// A key reported missing that a misspelt key's "did you mean" already names is left
    /// out.
    static func combined(_ problems: [PluginError], file: String) -> PluginError {
        let problems = problems.filter { problem in
            guard let key = problem.key, problem.problem.hasPrefix("missing") else { return true }
            let name = key.split(separator: ".").last.map(String.init) ?? key
            return !problems.contains { $0.problem.contains("did you mean \(name)?") }
        }
        guard problems.count > 1 else { return problems.first ?? PluginError(file: file, key: nil, "cannot be read") }
        let lines = problems.map { problem in
            "\n    " + [problem.key, problem.problem].compactMap { $0 }.joined(separator: ": ")
        }
        return PluginError(file: file, key: nil, "\(problems.count) problems:" + lines.joined())
    }

    /// `[limits] rate = "10/s"` (or `"600/min"`, `"5000/h"`, a number a second) and
    /// `concurrency = 4`: held in each apimacro process, no server needed.
    private func limits(_ root: [String: TOMLValue]) throws -> LocalLimits? {
        guard let limits = try table(root, "limits", in: nil) else { return nil }
        try allowOnly(limits, in: "limits", keys: ["rate", "concurrency"], what: "limits")
        var rate: Double?
        switch limits["rate"] {
        case nil: break
        case .string(let text)?:
            guard let parsed = RatePace.parse(text) else {
                throw fail(
                    "limits.rate", "\"\(text)\" is not a rate; write rate = \"10/s\" (or \"600/min\", \"5000/h\")")
            }
            rate = parsed
        case .integer(let value)? where value > 0: rate = Double(value)
        case .double(let value)? where value > 0 && value.isFinite: rate = value
        case let other?:
            throw fail(
                "limits.rate", "expected a rate such as \"10/s\", found \(other.typeName); write rate = \"10/s\"")
        }
        var concurrency: Int?
        switch limits["concurrency"] {
        case nil: break
        case .integer(let value)? where value >= 1: concurrency = value
        case let other?:
            throw fail(
                "limits.concurrency",
                "expected a whole number of 1 or more, found \(other.typeName); write concurrency = 4")
        }
        guard rate != nil || concurrency != nil else { return nil }
        return LocalLimits(
            rate: rate, concurrency: concurrency, rateSource: "\(file) [limits] rate",
            concurrencySource: "\(file) [limits] concurrency")
    }

    // MARK: sections

    private func auth(_ root: [String: TOMLValue]) throws -> PluginAuth {
        guard let auth = try table(root, "auth", in: nil) else { return .none }
        let kind = try string(auth, "kind", in: "auth", example: "\"none\"")
        let keys: [String]
        switch kind {
        case "none": keys = ["kind"]
        case "query_key": keys = ["kind", "param", "env"]
        case "header_key": keys = ["kind", "header", "env"]
        case "bearer": keys = ["kind", "env"]
        case "basic": keys = ["kind", "user_env", "env"]
        case "oauth2_implicit": keys = ["kind", "authorize_url", "param", "scope"]
        default:
            throw fail("auth.kind", "unknown kind \"\(kind)\"; use one of \(PluginAuth.kinds.joined(separator: ", "))")
        }
        try allowOnly(auth, in: "auth", keys: keys, what: "a \(kind) auth")
        func env(_ key: String) throws -> String {
            let value = try string(auth, key, in: "auth", example: "\"APIMACRO_MYAPI_KEY\"")
            guard !value.isEmpty, value.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }),
                !(value.first?.isNumber ?? true)
            else {
                throw fail(
                    "auth.\(key)",
                    "\"\(value)\" is not an environment variable name; use letters, digits and _ (e.g. \"APIMACRO_MYAPI_KEY\")"
                )
            }
            return value
        }
        switch kind {
        case "query_key":
            return .queryKey(param: try string(auth, "param", in: "auth", example: "\"api_key\""), env: try env("env"))
        case "header_key":
            return .headerKey(
                header: try string(auth, "header", in: "auth", example: "\"X-API-Key\""), env: try env("env"))
        case "bearer": return .bearer(env: try env("env"))
        case "basic": return .basic(userEnv: try env("user_env"), env: try env("env"))
        case "oauth2_implicit":
            let url = try string(
                auth, "authorize_url", in: "auth", example: "\"https://example.com/oauth2/authenticate\"")
            guard url.lowercased().hasPrefix("https://") || url.lowercased().hasPrefix("http://") else {
                throw fail(
                    "auth.authorize_url",
                    "\"\(url)\" is not an http(s) URL; write authorize_url = \"https://example.com/oauth2/authenticate\""
                )
            }
            return .oauth2Implicit(
                .init(
                    authorizeURL: url, param: try optionalString(auth, "param", in: "auth", example: "\"oauth_token\""),
                    scope: try optionalString(auth, "scope", in: "auth", example: "\"read\"")))
        default: return .none
        }
    }

    private func pagination(_ root: [String: TOMLValue]) throws -> Pagination {
        guard let pagination = try table(root, "pagination", in: nil) else { return .none }
        let kinds = ["none", "link_header", "next_url", "page_param", "offset", "cursor", "header_cursor"]
        let kind = try string(pagination, "kind", in: "pagination", example: "\"none\"")
        switch kind {
        case "none", "link_header":
            try allowOnly(pagination, in: "pagination", keys: ["kind"], what: "\(kind) pagination")
            return kind == "none" ? .none : .linkHeader
        case "next_url":
            try allowOnly(pagination, in: "pagination", keys: ["kind", "path"], what: "next_url pagination")
            guard let path = try path(pagination, "path", in: "pagination"), !path.isEmpty else {
                throw fail(
                    "pagination.path",
                    "missing; next_url pagination needs path = \"pagination.next_url\" (where the next page's URL is in the body)"
                )
            }
            return .nextURL(path: path)
        case "page_param":
            try allowOnly(
                pagination, in: "pagination", keys: ["kind", "param", "first"], what: "page_param pagination")
            let param = try string(pagination, "param", in: "pagination", example: "\"page\"")
            var first = 1
            switch pagination["first"] {
            case nil: break
            case .integer(let value)?: first = value
            case let other?:
                throw fail(
                    "pagination.first",
                    "expected an integer, found \(other.typeName); write first = 1 (the number of the first page)")
            }
            return .pageParameter(name: param, first: first)
        case "offset":
            try allowOnly(
                pagination, in: "pagination", keys: ["kind", "param", "limit_param", "limit", "total"],
                what: "offset pagination")
            let param = try optionalString(pagination, "param", in: "pagination", example: "\"offset\"") ?? "offset"
            let limitParam = try optionalString(pagination, "limit_param", in: "pagination", example: "\"limit\"")
            var size: Int?
            switch pagination["limit"] {
            case nil: break
            case .integer(let value)? where value >= 1:
                guard limitParam != nil else {
                    throw fail(
                        "pagination.limit",
                        "needs limit_param, the query parameter it is sent as; write limit_param = \"limit\"")
                }
                size = value
            case let other?:
                throw fail(
                    "pagination.limit",
                    "expected an integer of 1 or more, found \(other.typeName); write limit = 100 (the page size sent)")
            }
            let total = try path(pagination, "total", in: "pagination")
            if let total, total.isEmpty {
                throw fail("pagination.total", "empty; write total = \"meta.total\" (where the body holds the count)")
            }
            return .offset(parameter: param, limitParameter: limitParam, size: size, total: total)
        case "cursor":
            try allowOnly(pagination, in: "pagination", keys: ["kind", "path", "param"], what: "cursor pagination")
            guard let path = try path(pagination, "path", in: "pagination"), !path.isEmpty else {
                throw fail(
                    "pagination.path",
                    "missing; cursor pagination needs path = \"meta.next_cursor\" (where the next cursor is in the body)"
                )
            }
            let param = try string(pagination, "param", in: "pagination", example: "\"cursor\"")
            return .cursor(path: path, parameter: param)
        case "header_cursor":
            try allowOnly(
                pagination, in: "pagination", keys: ["kind", "header", "param"], what: "header_cursor pagination")
            let header = try string(pagination, "header", in: "pagination", example: "\"X-Next-Cursor\"")
            let param = try string(pagination, "param", in: "pagination", example: "\"cursor\"")
            return .headerCursor(header: header, parameter: param)
        default:
            throw fail("pagination.kind", "unknown kind \"\(kind)\"; use one of \(kinds.joined(separator: ", "))")
        }
    }

    /// The endpoints, each read on its own: the problems of all of them go to `problems`; nil
    /// when any endpoint (or the table) has one.
    private func endpoints(_ root: [String: TOMLValue], problems: inout [PluginError]) -> [PluginEndpoint]? {
        let table: [String: TOMLValue]
        do {
            guard let found = try self.table(root, "endpoints", in: nil), !found.isEmpty else {
                throw fail(
                    "endpoints", "missing; declare at least one endpoint: [endpoints.NAME] with path = \"/things\"")
            }
            table = found
        } catch {
            problems.append(error as? PluginError ?? fail("endpoints", "\(error)"))
            return nil
        }
        var read: [PluginEndpoint] = []
        var failed = false
        for name in table.keys.sorted() {
            do {
                read.append(try endpoint(named: name, in: table))
            } catch {
                problems.append(error as? PluginError ?? fail("endpoints.\(name)", "\(error)"))
                failed = true
            }
        }
        return failed ? nil : read
    }

    /// The endpoint `name` of the `[endpoints]` table.
    private func endpoint(named name: String, in endpoints: [String: TOMLValue]) throws -> PluginEndpoint {
        let key = "endpoints.\(name)"
        guard case .table(let table)? = endpoints[name] else {
            throw fail(
                key,
                "expected a table, found \(endpoints[name]?.typeName ?? "nothing"); write [\(key)] then path = \"/things\""
            )
        }
        guard Self.isIdentifier(name) else {
            throw fail(
                key,
                "\"\(name)\" is not a valid endpoint name; use lowercase letters, digits and _, starting with a letter (e.g. \"\(Self.suggestedName(name))\")"
            )
        }
        guard !Self.reservedMethods.contains(name) else {
            throw fail(
                key,
                "\"\(name)\" is reserved (every client has \(Self.reservedMethods.sorted().joined(separator: ", "))); rename the endpoint (e.g. \"\(name)_item\")"
            )
        }
        return try endpoint(name, table, key: key)
    }

    private func endpoint(_ name: String, _ fields: [String: TOMLValue], key: String) throws -> PluginEndpoint {
        try allowOnly(fields, in: key, keys: Self.endpointKeys, what: "an endpoint")
        let method = try optionalString(fields, "method", in: key, example: "\"GET\"")?.uppercased() ?? "GET"
        guard Self.methods.contains(method) else {
            throw fail("\(key).method", "unknown method \"\(method)\"; use GET, POST, PUT, PATCH or DELETE")
        }
        let path = try string(fields, "path", in: key, example: "\"/things\"")
        guard path.hasPrefix("/") else {
            throw fail("\(key).path", "\"\(path)\" must start with /; write path = \"/\(path)\"")
        }
        let placeholders = PluginEndpoint.placeholders(in: path)
        let declared = try table(fields, "params", in: key) ?? [:]
        var parameters: [PluginParameter] = []
        for (parameterName, value) in declared {
            let parameterKey = "\(key).params.\(parameterName)"
            guard case .string(let spelled) = value else {
                throw fail(
                    parameterKey,
                    "expected a string, found \(value.typeName); write \(parameterName) = \"string\" (or int, float, bool; add ! when required)"
                )
            }
            let required = spelled.hasSuffix("!")
            guard let type = PluginParameter.ParameterType(rawValue: required ? String(spelled.dropLast()) : spelled)
            else {
                throw fail(
                    parameterKey,
                    "unknown type \"\(spelled)\"; use string, int, float or bool, with ! for required (e.g. \"int!\")")
            }
            let inPath = placeholders.contains(parameterName)
            if inPath, !required {
                throw fail(
                    parameterKey, "a path parameter is always required; write \(parameterName) = \"\(type.rawValue)!\"")
            }
            parameters.append(PluginParameter(name: parameterName, type: type, required: required, inPath: inPath))
        }
        for placeholder in placeholders where declared[placeholder] == nil {
            throw fail(
                "\(key).path",
                "path parameter {\(placeholder)} is not declared; add \(placeholder) = \"string!\" to \(key).params")
        }
        let responseName = try optionalString(fields, "response", in: key, example: "\"json\"") ?? "json"
        guard let response = PluginEndpoint.ResponseFormat(rawValue: responseName) else {
            throw fail("\(key).response", "unknown response \"\(responseName)\"; use json, xml or text")
        }
        let result = try self.path(fields, "result", in: key) ?? []
        if !result.isEmpty, response != .json {
            throw fail(
                "\(key).result", "only a json response has a result path; remove result or write response = \"json\"")
        }
        parameters.sort { ($0.required ? 0 : 1, $0.name) < ($1.required ? 0 : 1, $1.name) }
        return PluginEndpoint(
            name: name, method: method, path: path, parameters: parameters, result: result, response: response,
            summary: try optionalString(fields, "description", in: key, example: "\"What it returns\""),
            answerError: try answerError(fields, in: key, response: response))
    }

    /// `error_when = { path = "ok", equals = false }` and `error_path = "error"`: an error inside
    /// a 2xx answer (JSON answers only).
    private func answerError(_ fields: [String: TOMLValue], in key: String, response: PluginEndpoint.ResponseFormat)
        throws -> AnswerErrorRule?
    {
        let messagePath = try path(fields, "error_path", in: key)
        if let messagePath, messagePath.isEmpty {
            throw fail("\(key).error_path", "empty; write error_path = \"error\" (where the message is)")
        }
        var when: (path: [String], equals: AnswerErrorRule.Scalar)?
        if let table = try table(fields, "error_when", in: key) {
            let prefix = "\(key).error_when"
            try allowOnly(table, in: prefix, keys: ["path", "equals"], what: "error_when")
            guard let path = try path(table, "path", in: prefix), !path.isEmpty else {
                throw fail("\(prefix).path", "missing; write error_when = { path = \"ok\", equals = false }")
            }
            switch table["equals"] {
            case .bool(let value)?: when = (path, .bool(value))
            case .integer(let value)?: when = (path, .int(value))
            case .string(let value)?: when = (path, .string(value))
            case nil:
                throw fail("\(prefix).equals", "missing; write equals = false (the value that means the call failed)")
            case let other?:
                throw fail(
                    "\(prefix).equals", "expected a boolean, an integer or a string, found \(other.typeName)")
            }
        }
        guard messagePath != nil || when != nil else { return nil }
        guard response == .json else {
            throw fail(
                "\(key).error_when", "only a json response can hold an error; remove it or write response = \"json\"")
        }
        return AnswerErrorRule(when: when, messagePath: messagePath)
    }

    // MARK: typed keys

    private func dotted(_ key: String, in prefix: String?) -> String { prefix.map { "\($0).\(key)" } ?? key }

    /// Throws for the first key not in `keys`, suggesting the nearest allowed one.
    private func allowOnly(_ table: [String: TOMLValue], in prefix: String?, keys: [String], what: String) throws {
        for key in table.keys.sorted() where !keys.contains(key) {
            let nearest = keys.min { Self.distance(key, $0) < Self.distance(key, $1) }
            let hint = nearest.flatMap { Self.distance(key, $0) <= 2 ? "did you mean \($0)? " : nil } ?? ""
            throw fail(dotted(key, in: prefix), "unknown key; \(hint)\(what) takes \(keys.joined(separator: ", "))")
        }
    }

    private func string(_ table: [String: TOMLValue], _ key: String, in prefix: String?, example: String) throws
        -> String
    {
        guard let value = try optionalString(table, key, in: prefix, example: example) else {
            throw fail(dotted(key, in: prefix), "missing; write \(key) = \(example)")
        }
        return value
    }

    private func optionalString(_ table: [String: TOMLValue], _ key: String, in prefix: String?, example: String) throws
        -> String?
    {
        switch table[key] {
        case nil: return nil
        case .string(let value)?: return value
        case let other?:
            throw fail(dotted(key, in: prefix), "expected a string, found \(other.typeName); write \(key) = \(example)")
        }
    }

    private func table(_ table: [String: TOMLValue], _ key: String, in prefix: String?) throws -> [String: TOMLValue]? {
        switch table[key] {
        case nil: return nil
        case .table(let value)?: return value
        case let other?:
            throw fail(
                dotted(key, in: prefix),
                "expected a table, found \(other.typeName); write \(key) = { … } or a [\(dotted(key, in: prefix))] section"
            )
        }
    }

    /// A table of strings (`headers`, `query`), sorted by name.
    private func strings(_ root: [String: TOMLValue], _ key: String, example: String) throws -> [(String, String)] {
        guard let table = try table(root, key, in: nil) else { return [] }
        return try table.keys.sorted().map { name in
            guard case .string(let value)? = table[name] else {
                throw fail(
                    "\(key).\(name)",
                    "expected a string, found \(table[name]?.typeName ?? "nothing"); write \(key) = \(example)")
            }
            return (name, value)
        }
    }

    /// A dotted JSON path (`meta.errorDetail`); "" is the whole body.
    private func path(_ table: [String: TOMLValue], _ key: String, in prefix: String) throws -> [String]? {
        guard let text = try optionalString(table, key, in: prefix, example: "\"data.items\"") else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if text.isEmpty { return [] }
        guard !parts.contains(where: \.isEmpty) else {
            throw fail(
                "\(prefix).\(key)",
                "\"\(text)\" is not a JSON path; write keys joined by dots (e.g. \"response.venues\")")
        }
        return parts
    }

    // MARK: names

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLowercase else { return false }
        return name.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLowercase || $0.isNumber)) }
    }

    static func suggestedName(_ name: String) -> String {
        let cleaned = String(name.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        let trimmed = cleaned.drop { !$0.isLetter }
        return trimmed.isEmpty ? "myapi" : String(trimmed)
    }

    /// Levenshtein distance, for "did you mean".
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let saved = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = saved
            }
        }
        return row[b.count]
    }
}
