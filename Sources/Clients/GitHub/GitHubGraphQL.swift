import Platform
public import WebAPI

/// GitHub's GraphQL API: where it lives, how a query is sent, and how an answer
/// that holds `errors` is recognised.
public enum GitHubGraphQL {
    /// The endpoint for a REST base URL, as GitHub lays them out:
    /// `https://api.github.com` → `https://api.github.com/graphql`, and
    /// GitHub Enterprise Server's `https://HOST/api/v3` → `https://HOST/api/graphql`.
    public static func endpoint(forREST baseURL: String) -> String {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        let enterpriseSuffix = "/api/v3"
        if base.lowercased().hasSuffix(enterpriseSuffix) {
            return String(base.dropLast(enterpriseSuffix.count)) + "/api/graphql"
        }
        return base + "/graphql"
    }

    /// The POST of `query` with `variables` (a JSON object, already encoded) to `endpoint`.
    public static func request(endpoint: String, query: String, variablesJSON: [UInt8]?) -> Request {
        var body = Array(#"{"query":"#.utf8)
        body += jsonString(query)
        if let variablesJSON {
            body += Array(#","variables":"#.utf8)
            body += variablesJSON
        }
        body += Array("}".utf8)
        return Request("POST", endpoint, body: .json(body))
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> [UInt8] {
        // A one-element array always serializes; its brackets are dropped.
        let data = JSONValue.array([.string(text)]).encoded([.withoutEscapingSlashes]) ?? Data("[\"\"]".utf8)
        return Array(data.dropFirst().dropLast())
    }

    /// The errors in a GraphQL answer, or nil when it has none (an absent, null or empty `errors`),
    /// or when it is too large to check (`JSONPath.maxValues`).
    ///
    /// Their messages are redacted with `redactor`: a server may quote the token in one.
    public static func failure(in response: Response, redactor: Redactor) -> GraphQLError? {
        guard let root = JSONValue.native(in: response.body, path: []) as? [String: Any],
            let errors = root["errors"] as? [Any], !errors.isEmpty
        else { return nil }
        let messages = errors.map { error -> String in
            redactor.redact(((error as? [String: Any])?["message"] as? String) ?? String(describing: error))
        }
        let data = root["data"]
        return GraphQLError(messages: messages, hasData: data != nil && !JSONValue.isNull(data), response: response)
    }
}

extension GitHubConfiguration {
    /// The GraphQL endpoint: `graphQLURL` if set, else derived from `baseURL`
    /// (`GitHubGraphQL.endpoint(forREST:)`).
    public var graphQLEndpoint: String {
        graphQLURL ?? GitHubGraphQL.endpoint(forREST: baseURL)
    }

    /// The pipeline configuration of the GraphQL endpoint: the REST one with the
    /// endpoint as its base URL, so the token goes only to the endpoint's host.
    public var graphQLClient: ClientConfiguration {
        var configuration = client
        configuration.baseURL = graphQLEndpoint.hasSuffix("/") ? String(graphQLEndpoint.dropLast()) : graphQLEndpoint
        return configuration
    }
}

extension GitHubClient {
    /// Sends `query` with `variablesJSON` (a JSON object) to the GraphQL endpoint.
    ///
    /// HTTP failures throw `APIError`; an answer holding `errors` throws
    /// `GraphQLError`.
    public func graphQL(_ query: String, variablesJSON: [UInt8]? = nil) async throws -> Response {
        let response = try await graphQLAPI.send(
            GitHubGraphQL.request(endpoint: configuration.graphQLEndpoint, query: query, variablesJSON: variablesJSON))
        if let failure = GitHubGraphQL.failure(in: response, redactor: graphQLAPI.redactor) { throw failure }
        return response
    }
}
