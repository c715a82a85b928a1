import PythonBridge
import Testing

@Suite("inspect.signature and help() of native functions and methods")
struct TextSignatureTests {
    final class Box {}

    @Test("the doc string's first line is the signature inspect and pydoc read; the doc keeps it")
    func signaturesFromDocs() async throws {
        let results = try await python {
            try fetching {
                let request = try NativeFunction.make(
                    "request",
                    doc: """
                        request(method, url, params=None, headers=None,
                                timeout=None, cache=True) -> Response

                        One request.
                        """
                ) { _ in .none }
                let plain = try NativeFunction.make("plain", doc: "Does things (no signature).") { _ in .none }
                let builder = NativeClass<Box>(name: "Client", module: "testmod", doc: "A client.")
                try builder.method("repos", doc: "repos(login, limit=None, **params) -> iterator\n\nEvery page.") {
                    _, _ in .none
                }
                try builder.method("me", doc: "me() -> dict") { _, _ in .none }
                try builder.method("media", doc: "media(user_id='me)(', *, fields=None) -> list (of dicts)") {
                    _, _ in .none
                }
                try builder.build()
                let globals = try Interpreter.newGlobals()
                try globals.setItem("request", request)
                try globals.setItem("plain", plain)
                try globals.setItem("client", builder.instance(Box()))
                try Interpreter.exec(
                    """
                    import inspect, pydoc
                    def sig(f):
                        try:
                            return str(inspect.signature(f))
                        except ValueError as error:
                            return 'ValueError'
                    out = [sig(request), request.__doc__, sig(plain), plain.__doc__,
                           sig(client.repos), sig(type(client).repos), sig(client.me), sig(client.media),
                           pydoc.render_doc(client.repos, renderer=pydoc.plaintext).splitlines()[2].strip()]
                    """, globals: globals)
                return try PythonValue(python: Interpreter.eval("out", globals: globals))
            }
        }
        #expect(
            results
                == .list([
                    .string("(method, url, params=None, headers=None, timeout=None, cache=True)"),
                    .string(
                        "request(method, url, params=None, headers=None,\n        timeout=None, cache=True) -> Response\n\nOne request."
                    ),
                    .string("ValueError"), .string("Does things (no signature)."),
                    .string("(login, limit=None, **params)"), .string("(self, login, limit=None, **params)"),
                    .string("()"), .string("(user_id='me)(', *, fields=None)"),
                    .string("repos(login, limit=None, **params) method of testmod.Client instance"),
                ]))
    }

    @Test("a shared keyword is taken out before the body binds, shown keyword-only, and passed to around")
    func sharedKeyword() async throws {
        let results = try await python {
            try fetching {
                let builder = NativeClass<Box>(name: "Keyed", module: "testmod", doc: "A client.")
                builder.sharedKeyword = (
                    "cache",
                    { value, body in
                        let seen = value.map { (try? String(pythonString: $0)) ?? "?" } ?? "none"
                        return try PyRef(string: seen + ":" + String(pythonString: body()))
                    }
                )
                try builder.method("repos", doc: "repos(login, limit=None, **params) -> iterator") { _, arguments in
                    try PyRef(string: arguments.keywords.map(\.0).joined(separator: ","))
                }
                try builder.method("me", doc: "me() -> dict") { _, _ in try PyRef(string: "me") }
                try builder.method("media", doc: "media(user_id='me', *, fields=None) -> list") { _, _ in
                    try PyRef(string: "media")
                }
                try builder.build()
                let globals = try Interpreter.newGlobals()
                try globals.setItem("client", builder.instance(Box()))
                try Interpreter.exec(
                    """
                    import inspect
                    out = [str(inspect.signature(client.repos)), str(inspect.signature(client.me)),
                           str(inspect.signature(client.media)), client.repos("x", cache="1h", type="owner"),
                           client.me()]
                    """, globals: globals)
                return try PythonValue(python: Interpreter.eval("out", globals: globals))
            }
        }
        #expect(
            results
                == .list([
                    .string("(login, limit=None, *, cache=None, **params)"), .string("(*, cache=None)"),
                    .string("(user_id='me', *, fields=None, cache=None)"), .string("1h:type"), .string("none:me"),
                ]))
    }
}
