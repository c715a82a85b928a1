import Clients
import PythonBridge

/// `apimacro.shortener`: Google URL Shortener v1 (SPEC §3).
enum ShortenerBinding {
    static func install(_ context: BuiltInClient.Context) throws {
        let runtime = context.runtime
        let decoder = context.decoder
        let shortener = ShortenerClient(
            configuration: ShortenerConfiguration(runtime.view(of: Shortener.descriptor)),
            transport: runtime.transport, log: runtime.log, redactor: runtime.redactor)
        let builder = NativeClass<ShortenerClient>(
            name: "Shortener", module: "apimacro", doc: "Google URL Shortener v1 (key from APIMACRO_SHORTENER_KEY).")
        // No key from the environment and a credential store that cannot be read: say so rather
        // than send requests without the stored key.
        let storeProblem = shortener.api.credential == nil ? runtime.credentialProblem : nil
        try builder.method("shorten", doc: "shorten(long_url) -> dict with id (the short URL) and longUrl") {
            client, arguments in
            if let storeProblem { throw storeProblem }
            let slots = try arguments.bind("shorten", ["long_url"], required: 1)
            let url = try Arguments.string(slots[0], "long_url", in: "shorten")
            try ShortenerClient.validate(url, argument: "shorten() long_url")
            let response = try withoutGIL { try await client.shorten(url) }
            return try decoder.decode(response, api: "shortener")
        }
        try builder.method("expand", doc: "expand(short_url) -> dict with id, longUrl and status") {
            client, arguments in
            if let storeProblem { throw storeProblem }
            let slots = try arguments.bind("expand", ["short_url"], required: 1)
            let url = try Arguments.string(slots[0], "short_url", in: "expand")
            try ShortenerClient.validate(url, argument: "expand() short_url")
            let response = try withoutGIL { try await client.expand(url) }
            return try decoder.decode(response, api: "shortener")
        }
        try builder.method("__repr__") { client, _ in
            try PyRef(
                string:
                    "<apimacro.shortener \(client.api.redactor.redactURL(client.configuration.baseURL)) (\(client.api.credential == nil ? "no key" : "key set"))>"
            )
        }
        try builder.build()
        try context.module.set("shortener", builder.instance(shortener))
    }
}
