import Clients
public import Platform
public import WebAPI

/// A validated `plugin.toml`: everything needed to build the plugin's client.
public struct PluginManifest: Sendable {
    /// `[a-z][a-z0-9_]*`, unique among loaded plugins and built-in clients.
    public let name: String
    /// One line for `plugins list`.
    public let description: String
    /// The default base URL (`APIMACRO_<NAME>_URL` overrides it), without a trailing slash.
    public let baseURL: String
    /// How requests are authenticated (`auth`, default none).
    public let auth: PluginAuth
    /// Headers sent with every request.
    public let headers: [(String, String)]
    /// Query parameters sent with every endpoint request (an API version such as Foursquare's `v`).
    public let query: [(String, String)]
    /// How list endpoints link their pages (`pagination`, default none).
    public let pagination: Pagination
    /// Where the message of an error body is (`message`, `meta.errorDetail`).
    public let errorMessage: [String]?
    /// Where an error body holds its code (`cod`, `meta.code`): 401, 403, 404 and 429 pick the exception class.
    public let errorCode: [String]?
    /// Sorted by name.
    public let endpoints: [PluginEndpoint]
    /// `[limits]`: the rate and concurrency held in each process (`LocalLimitStage`), if any.
    public var limits: LocalLimits? = nil
    /// The plugin's folder.
    public let folder: URL

    /// `<folder>/plugin.toml`.
    public var file: URL { folder.appendingPathComponent("plugin.toml") }

    /// `<folder>/plugin.py`, when the plugin has one.
    public var pythonFile: URL? {
        let file = folder.appendingPathComponent("plugin.py")
        return FileManager.default.fileExists(atPath: file.path) ? file : nil
    }

    /// `<folder>/macros`, when the plugin has one.
    public var macrosFolder: URL? {
        let folder = self.folder.appendingPathComponent("macros")
        var isDirectory = false
        return FileManager.default.fileExists(atPath: folder.path, isFolder: &isDirectory) && isDirectory
            ? folder : nil
    }

    /// The endpoint called `name`.
    public func endpoint(_ name: String) -> PluginEndpoint? { endpoints.first { $0.name == name } }

    /// The environment prefix of this plugin's variables: `APIMACRO_OPENWEATHER`.
    public var environmentPrefix: String { "APIMACRO_" + name.uppercased() }

    /// Reads and validates `<folder>/plugin.toml`; throws a `PluginError`.
    ///
    /// `reservedNames` are the built-in clients' names, which a plugin may not take.
    public static func load(folder: URL, reservedNames: Set<String>) throws -> PluginManifest {
        let file = folder.appendingPathComponent("plugin.toml")
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw PluginError(
                file: folder.path, key: nil,
                "no plugin.toml; a plugin folder holds plugin.toml (see \"Write a plugin\" in the README)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw PluginError(file: file.path, key: nil, "not UTF-8 text; save plugin.toml as UTF-8")
        }
        return try ManifestReader(file: file.path, reservedNames: reservedNames).read(text, folder: folder)
    }
}

extension PluginManifest {
    /// Whether `name` may name a plugin or an endpoint: lowercase letters, digits and `_`, starting
    /// with a letter.
    public static func isValidName(_ name: String) -> Bool { ManifestReader.isIdentifier(name) }

    /// A valid name close to `name` (`My-API` → `my_api`), for messages.
    public static func suggestedName(_ name: String) -> String { ManifestReader.suggestedName(name) }
}
