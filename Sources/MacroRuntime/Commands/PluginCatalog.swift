import Clients
import Platform
public import PluginHost
import WebAPI

/// `apimacro plugins list` and `plugins show NAME`: what the plugin folders
/// hold, which plugins have credentials (never the secrets), why a plugin
/// did not load, and the help a user needs to call each endpoint.
public struct PluginCatalog: Sendable {
    let settings: Settings
    /// The plugins found, loaded once.
    public let registry: PluginRegistry

    /// Loads the plugins of `settings.pluginFolders`.
    public init(settings: Settings) {
        self.settings = settings
        registry = PluginRegistry.load(settings: settings)
    }

    /// Where a plugin's credential comes from, or what is missing (in full, or in a few words for `list`).
    func credentials(_ manifest: PluginManifest, short: Bool = false) -> String {
        guard manifest.auth != .none else { return "not needed" }
        let store = settings.credentialStore()
        let stored = (try? store.token(for: manifest.name)) ?? nil
        // Named as `auth status` names it (the config.toml key when the file set it).
        if let found = manifest.descriptor.credential(in: settings.view(storedCredential: stored)) {
            return "present (\(settings.describe(found.source)))"
        }
        let credential = PluginCredential(manifest: manifest, environment: settings.environment, storedToken: stored)
        guard short else { return "missing: \(credential.hint ?? "see plugins show \(manifest.name)")" }
        switch manifest.auth {
        case .oauth2Implicit: return "missing: apimacro login \(manifest.name)"
        case .queryKey(_, let variable), .headerKey(_, let variable), .bearer(let variable):
            return "missing: set \(variable)"
        case .basic(let user, let password): return "missing: set \(user), \(password)"
        case .none: return "not needed"
        }
    }

    /// One row per plugin (name, endpoints, credentials, description), then the plugins that failed to load.
    public func list() -> String {
        var lines: [String] = []
        if registry.plugins.isEmpty {
            lines.append("No plugins found in \(registry.folders.map(\.path).joined(separator: ", ")).")
        } else {
            let rows =
                [["NAME", "ENDPOINTS", "CREDENTIALS", "DESCRIPTION"]]
                + registry.plugins.map {
                    [$0.name, String($0.endpoints.count), credentials($0, short: true), $0.description]
                }
            let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                let padded = (0..<3).map { row[$0].padded(toLength: widths[$0]) }
                lines.append((padded + [row[3]]).joined(separator: "  "))
            }
        }
        if !registry.overridden.isEmpty {
            lines.append("")
            lines.append("Overridden (a plugin of the same name, found earlier in the search order, is used instead):")
            lines += registry.overridden.map { "  \($0.name): \($0.folder.path) (used: \($0.winner.path))" }
        }
        if !registry.failures.isEmpty {
            lines.append("")
            lines.append("Failed to load (the other plugins work):")
            lines += registry.failures.map { "  \($0.name): \($0.error)" }
        }
        return lines.joined(separator: "\n")
    }

    /// The plugin's settings and every endpoint with its parameters; a usage error when it is unknown or failed.
    public func show(_ name: String) throws -> String {
        guard let manifest = registry.plugin(named: name) else {
            if let failure = registry.failure(named: name) {
                throw MacroError("plugin '\(name)' did not load: \(failure.error)")
            }
            let names = registry.plugins.map(\.name).joined(separator: ", ")
            throw MacroError(
                "no plugin named '\(name)'; loaded plugins: \(names.isEmpty ? "none" : names) (see apimacro plugins list)"
            )
        }
        let variable = manifest.environmentPrefix + "_URL"
        let baseURL = settings.environment[variable].flatMap { $0.isEmpty ? nil : $0 } ?? manifest.baseURL
        var lines = [
            "\(manifest.name): \(manifest.description)",
            "  manifest:     \(manifest.file.path)",
            "  base URL:     \(Redactor(secrets: []).redactURL(baseURL)) (\(variable) overrides it)",
            "  auth:         \(Self.describe(manifest.auth, manifest: manifest))",
            "  credentials:  \(credentials(manifest))",
            "  pagination:   \(Self.describe(manifest.pagination))",
        ]
        if let limits = manifest.limits {
            let parts =
                (limits.rate.map { ["at most \(RatePace.describe($0))"] } ?? [])
                + (limits.concurrency.map { ["\($0) in flight"] } ?? [])
            lines.append("  limits:       \(parts.joined(separator: ", ")) in each process ([limits])")
        }
        for override in registry.overridden where override.name == name {
            lines.append(
                "  overrides:    \(override.folder.path) (a plugin of the same name found later in the search order)")
        }
        if let macros = manifest.macrosFolder {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: macros.path)) ?? [])
                .filter { $0.hasSuffix(".py") && !$0.hasPrefix("_") }.map { String($0.dropLast(3)) }.sorted()
            lines.append("  macros:       \(names.joined(separator: ", ")) (apimacro run NAME)")
        }
        if let python = manifest.pythonFile {
            let problem = Self.pythonProblem(manifest).map { " -- \($0)" } ?? ""
            lines.append("  plugin.py:    \(python.path) (its public functions are methods too)\(problem)")
            let functions = Self.publicFunctions(in: python)
            lines.append(
                "  functions:    "
                    + (functions.isEmpty
                        ? "none (no top-level def without a leading _)"
                        : functions.map { "\(manifest.name).\($0)" }.joined(separator: ", ")))
        }
        lines.append("")
        lines.append("In a macro: \(manifest.name) = apimacro.client(\"\(manifest.name)\"), then:")
        for endpoint in manifest.endpoints {
            lines.append("")
            lines += endpoint.help(plugin: manifest.name).split(separator: "\n", omittingEmptySubsequences: false).map {
                $0.isEmpty ? "" : "  " + $0
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The public functions `plugin.py` defines at its top level, as a macro calls them.
    ///
    /// The client, their first parameter, is left out (`forecast(city, days=3)`); `name(...)`
    /// when the parameters span lines. Read from the text, never run.
    static func publicFunctions(in file: URL) -> [String] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            guard let match = line.prefixMatch(of: /(?:async\s+)?def\s+([A-Za-z][A-Za-z0-9_]*)\s*\(/) else {
                return nil
            }
            let name = String(match.output.1)
            let rest = line[match.range.upperBound...]
            guard let close = rest.firstIndex(of: ")") else { return "\(name)(...)" }
            let parameters = rest[..<close].split(separator: ",").map { $0.trimmingWhitespace() }
            return "\(name)(\(parameters.dropFirst().filter { !$0.isEmpty }.joined(separator: ", ")))"
        }
    }

    static func describe(_ auth: PluginAuth, manifest: PluginManifest) -> String {
        switch auth {
        case .none: "none"
        case .queryKey(let param, let env):
            "query_key: ?\(param)=KEY, the key from \(env) or apimacro login \(manifest.name)"
        case .headerKey(let header, let env):
            "header_key: \(header): KEY, the key from \(env) or apimacro login \(manifest.name)"
        case .bearer(let env):
            "bearer: Authorization: Bearer TOKEN, the token from \(env) or apimacro login \(manifest.name)"
        case .basic(let user, let password): "basic: the user from \(user), the password from \(password)"
        case .oauth2Implicit(let settings):
            "oauth2_implicit: apimacro login \(manifest.name) (needs \(manifest.environmentPrefix)_CLIENT_ID; authorize URL \(settings.authorizeURL)); "
                + "the token travels as \(settings.param.map { "?\($0)=TOKEN" } ?? "Authorization: Bearer TOKEN")"
        }
    }

    static func describe(_ pagination: Pagination) -> String {
        switch pagination {
        case .none: "none"
        case .linkHeader: "link_header (Link: rel=\"next\")"
        case .nextURL(let path): "next_url (the URL at \(path.joined(separator: ".")))"
        case .pageParameter(let name, let first, let pages):
            "page_param (\(name)=\(first), \(first + 1), … until a page is empty"
                + (pages.map { " or the page numbered at \($0.joined(separator: "."))" } ?? "") + ")"
        case .offset(let name, let limitName, let size, let total):
            "offset (\(name)=0, then past each page's items"
                + (limitName.map { name in ", \(name)=\(size.map(String.init) ?? "as given") a page" } ?? "")
                + " until a page is empty or short"
                + (total.map { ", or the offset reaches \($0.joined(separator: "."))" } ?? "") + ")"
        case .cursor(let path, let name):
            "cursor (\(name)= the cursor at \(path.joined(separator: ".")) until it is empty)"
        case .headerCursor(let header, let name): "header_cursor (\(name)= the \(header) header until it is absent)"
        }
    }
}
