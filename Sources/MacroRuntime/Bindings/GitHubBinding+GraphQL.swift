import Clients
import Platform
import PythonBridge
import WebAPI

extension GitHubBinding {
    /// `github.graphql(query, **variables)` and `github.graphql_paginate(query, path,
    /// limit=None, **variables)`: GitHub's GraphQL API as two more methods of the
    /// `github` object.
    ///
    /// Answers are checked and walked by the small Python helpers below (they see the
    /// decoded dicts directly); pages go through `PageState`.
    enum GraphQL {
        /// Adds the methods to the `github` class and the helpers to `module`.
        static func install(on builder: NativeClass<GitHubBinding>, module: NativeModule) throws {
            try module.exec(PythonPackage.source("_native_graphql.py"))
            try builder.method(
                "graphql",
                doc: """
                    graphql(query, **variables) -> dict

                    POSTs the query and its variables to the GraphQL endpoint (\(GitHub.graphQLURL.variable), else next to
                    \(GitHub.url.variable)) with the GitHub token, and returns the answer's `data`. An answer holding `errors`
                    raises GraphQLError (.errors, .data); HTTP failures raise the usual classes.
                    """
            ) { binding, arguments in
                let slots = try own(arguments, ["query"]).bind("graphql", ["query"], required: 1)
                let query = try Arguments.string(slots[0], "query", in: "graphql")
                let variables = try variablesDict(arguments, reserved: ["query"])
                let request = try request(binding.client, query: query, variables: variables)
                let api = binding.client.graphQLAPI
                let response = try withoutGIL { try await api.send(request) }
                let payload = try binding.decoder.decode(response, api: api.configuration.name)
                return try helper("_graphql_data").call(try [payload] + facts(response, api: api))
            }
            try builder.method(
                "graphql_paginate",
                doc: """
                    graphql_paginate(query, path, limit=None, **variables) -> iterator

                    Every node of the connection at `path` (e.g. "repository.issues": data.repository.issues.nodes, or
                    its edges[].node), one request per page: the query declares `$cursor` and passes it as `after:`, and
                    selects pageInfo { hasNextPage endCursor }. `limit` stops without asking for another page.
                    """
            ) { binding, arguments in
                let slots = try own(arguments, ["query", "path", "limit"]).bind(
                    "graphql_paginate", ["query", "path", "limit"], required: 2)
                let query = try Arguments.string(slots[0], "query", in: "graphql_paginate")
                let path = try Arguments.string(slots[1], "path", in: "graphql_paginate")
                let limit = try Arguments.limit(slots[2], in: "graphql_paginate")
                guard query.contains(/\$cursor\b/.wordBoundaryKind(.simple)) else {
                    throw APIError(
                        .invalidRequest,
                        "graphql_paginate() needs a query that declares $cursor and passes it on, e.g. "
                            + "query($cursor: String) { repository(...) { issues(first: 50, after: $cursor) { ... } } }"
                    )
                }
                guard !path.isEmpty,
                    !path.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
                else {
                    throw APIError(
                        .invalidRequest,
                        "graphql_paginate() needs a path such as \"repository.issues\", not \(path.debugDescription)")
                }
                let variables = try variablesDict(arguments, reserved: ["query", "path", "limit"])
                let firstCursor = try variables.item("cursor")
                if firstCursor == nil { try variables.setItem("cursor", .none) }
                let client = binding.client
                let api = client.graphQLAPI
                let pathObject = try PyRef(string: path)
                let state = PageState(
                    client: api, first: try request(client, query: query, variables: variables), pagination: .none,
                    limit: limit,
                    decoder: binding.decoder,
                    page: { payload, response, sent in
                        let result = try helper("_graphql_page").call(
                            try [payload, pathObject] + facts(response, api: api))
                        let items = try PyRef.checked(PySequence.item(result, 0))
                        let cursor = try PyRef.checked(PySequence.item(result, 1))
                        guard !cursor.isNone else { return PageState.Page(items: items, next: nil) }
                        try variables.setItem("cursor", cursor)
                        var next = try request(client, query: query, variables: variables)
                        next.timeout = sent.timeout
                        return PageState.Page(items: items, next: next, cursor: try String(pythonString: cursor))
                    },
                    // A cursor the macro passed is a page asked for too: a server answering with it
                    // later goes round in a loop.
                    firstCursor: try firstCursor.flatMap { $0.typeName == "str" ? try String(pythonString: $0) : nil },
                    cursorSource: "graphql_paginate: \(path).pageInfo.endCursor")
                return try binding.iterators.instance(state)
            }
        }

        /// The POST of `query` with `variables` (a dict) as JSON.
        static func request(_ client: GitHubClient, query: String, variables: PyRef) throws -> Request {
            let dumps = try Interpreter.import("json").attribute("dumps")
            let text = try String(pythonString: dumps.call([variables], kwargs: [("ensure_ascii", .bool(false))]))
            return GitHubGraphQL.request(
                endpoint: client.configuration.graphQLEndpoint, query: query, variablesJSON: Array(text.utf8))
        }

        /// The positional arguments and the method's own keywords (the rest are GraphQL variables).
        static func own(_ arguments: PyArguments, _ names: Set<String>) -> PyArguments {
            PyArguments(positional: arguments.positional, keywords: arguments.keywords.filter { names.contains($0.0) })
        }

        /// The keyword arguments that are not the method's own, as a new dict.
        static func variablesDict(_ arguments: PyArguments, reserved: Set<String>) throws -> PyRef {
            try Interpreter.import("builtins").attribute("dict").call(
                [], kwargs: arguments.keywords.filter { !reserved.contains($0.0) })
        }

        /// Status, URL and (redacted) body of `response`, for the helpers' exceptions.
        static func facts(_ response: Response, api: APIClient) throws -> [PyRef] {
            [
                try PythonValue.int(response.status).toPython(), try PyRef(string: response.url),
                try PyRef(string: api.redactor.redact(response.text)),
            ]
        }

        static func helper(_ name: String) throws -> PyRef {
            try Interpreter.import("_apimacro").attribute(name)
        }
    }
}
