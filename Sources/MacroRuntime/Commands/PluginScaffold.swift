import Clients
public import Platform
import PluginHost
import PythonBridge
import WebAPI

/// `apimacro plugins new NAME --from-openapi FILE_OR_URL`: a plugin folder (`plugin.toml`, a
/// `.pyi` stub of its client, a smoke macro) made from an OpenAPI 3.0 or 3.1 document.
///
/// The document is read and mapped by the bundled package's `apimacro._openapi` (a URL fetched
/// through apimacro's own transport); this side checks the name and the folder, writes the
/// files, and loads the manifest as `plugins show` does before anything is left in place.
public struct PluginScaffold {
    let settings: Settings

    /// A scaffold writing where `settings` says (`$APIMACRO_HOME/plugins/NAME` by default).
    public init(settings: Settings) {
        self.settings = settings
    }

    /// The folder a plugin called `name` is written to without `--dir`.
    public func defaultFolder(_ name: String) -> URL {
        settings.home.appendingPathComponent("plugins").appendingPathComponent(name)
    }

    /// Makes the plugin and returns the report to print: the files, the endpoints, the auth and
    /// paging chosen, what was left out and why.
    ///
    /// - Throws: `MacroError` (exit 2) for a bad name, a taken folder or a document that cannot
    ///   be used; `ExitReport.failure` (exit 1) when the generated manifest does not load.
    public func make(name: String, source: String, folder: URL?, baseURL: String?, force: Bool) throws -> String {
        try check(name: name)
        let target = (folder ?? defaultFolder(name)).standardizedFileURL
        let registry = PluginRegistry.load(settings: settings)
        if let installed = registry.plugin(named: name),
            installed.folder.standardizedFileURL.resolvingSymlinksInPath() != target.resolvingSymlinksInPath()
        {
            throw MacroError(
                "a plugin named '\(name)' is already installed (\(installed.folder.path)); choose another name (e.g. \(name)_openapi)"
            )
        }
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: target.path), !force {
            throw MacroError(
                "\(target.path) already exists; choose another folder with --dir, or replace it with --force")
        }
        if let baseURL, !(baseURL.lowercased().hasPrefix("https://") || baseURL.lowercased().hasPrefix("http://")) {
            throw MacroError("--base-url \(baseURL) is not an http(s) URL; write --base-url https://api.example.com/v1")
        }
        let generated = try generate(name: name, source: source, baseURL: baseURL)
        if case .string(let problem)? = generated["error"] {
            throw MacroError(problem)
        }
        guard case .dict(let fileEntries)? = generated["files"] else {
            throw ExitReport.failure("apimacro._openapi returned no files (a bug: please report it)")
        }
        // Written beside the target first, loaded, then moved into place: a manifest that does not
        // load leaves nothing behind.
        let staging = target.deletingLastPathComponent().appendingPathComponent(
            ".\(name).new-\(ProcessInfo.processInfo.processIdentifier)")
        try? fileManager.removeItem(at: staging)
        defer { try? fileManager.removeItem(at: staging) }
        do {
            for entry in fileEntries {
                guard case .string(let relative) = entry.key, case .string(let text) = entry.value else { continue }
                let file = staging.appendingPathComponent(relative)
                try fileManager.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: file)
            }
        } catch {
            throw MacroError("cannot write the plugin under \(target.path): \(SystemErrorText.describe(error))")
        }
        let manifest: PluginManifest
        do {
            manifest = try PluginManifest.load(folder: staging, reservedNames: BuiltInClients.names)
        } catch {
            throw ExitReport.failure(
                "the plugin.toml made from \(source) does not load (\(error)); nothing was written. This is a bug in "
                    + "the OpenAPI mapping: please report it with the document")
        }
        do {
            if fileManager.fileExists(atPath: target.path) { try fileManager.removeItem(at: target) }
            try fileManager.moveItem(at: staging, to: target)
        } catch {
            throw MacroError("cannot put the plugin in \(target.path): \(SystemErrorText.describe(error))")
        }
        return report(generated, manifest: manifest, folder: target, explicitFolder: folder != nil)
    }

    /// Refuses a name that is not an identifier or is a built-in client's.
    func check(name: String) throws {
        guard PluginManifest.isValidName(name) else {
            throw MacroError(
                "'\(name)' is not a valid plugin name; use lowercase letters, digits and _, starting with a letter (e.g. \(PluginManifest.suggestedName(name)))"
            )
        }
        guard !BuiltInClients.names.contains(name) else {
            throw MacroError("'\(name)' is a built-in client; choose another name (e.g. \(name)_api)")
        }
    }

    /// Calls `apimacro._openapi.generate` in the embedded interpreter.
    func generate(name: String, source: String, baseURL: String?) throws -> PythonValue {
        // The host loads apimacro into the interpreter: `apimacro.get` fetches a URL through it.
        let host = try MacroHost(settings: settings)
        return try withExtendedLifetime(host) {
            try withGIL {
                do {
                    let module = try Interpreter.import("apimacro._openapi")
                    let base = try baseURL.map { try PyRef(string: $0) } ?? PyRef.none
                    let result = try module.callMethod(
                        "generate", [PyRef(string: name), PyRef(string: source), base])
                    return try PythonValue(python: result)
                } catch is PythonErrorSet {
                    let failure = PythonException.fetch()?.description ?? "unknown error"
                    throw ExitReport.failure("reading the OpenAPI document failed: \(failure)")
                }
            }
        }
    }

    func report(_ generated: PythonValue, manifest: PluginManifest, folder: URL, explicitFolder: Bool) -> String {
        func strings(_ key: String) -> [String] {
            guard case .list(let items)? = generated[key] else { return [] }
            return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
        func string(_ key: String) -> String {
            if case .string(let text)? = generated[key] { return text }
            return ""
        }
        let files = [
            ("plugin.toml", "\(manifest.endpoints.count) endpoints; base URL \(manifest.baseURL)"),
            (
                "\(manifest.name).pyi",
                "type stub of its client: typing.cast(\"\(manifest.name).\(Self.className(manifest.name))\", apimacro.client(\"\(manifest.name)\")), the folder on MYPYPATH"
            ),
            ("macros/\(string("macro")).py", "one call printed: apimacro run \(string("macro"))"),
        ]
        let width = (files.map(\.0.count).max() ?? 0) + 2
        var lines = ["Made the plugin \(manifest.name) in \(folder.path):"]
        lines += files.map { "  " + $0.0.padded(toLength: width) + $0.1 }
        lines += [
            "  auth:       \(string("auth"))",
            "  pagination: \(string("pagination"))",
            "",
            "Endpoints:",
        ]
        if case .list(let endpoints)? = generated["endpoints"] {
            for endpoint in endpoints {
                guard case .string(let name)? = endpoint["name"], case .string(let method)? = endpoint["method"],
                    case .string(let path)? = endpoint["path"]
                else { continue }
                var line = "  \(name)".padded(toLength: 28) + "\(method) \(path)"
                if case .string(let paging)? = endpoint["paging"], !paging.isEmpty { line += " (list; \(paging))" }
                lines.append(line)
            }
        }
        let leftOut = strings("left_out")
        lines.append("")
        if leftOut.isEmpty {
            lines.append("Left out: nothing; every operation and parameter is in plugin.toml.")
        } else {
            lines.append("Left out (plugin.toml cannot express them; \(leftOut.count)):")
            lines += leftOut.map { "  - \($0)" }
        }
        let notes = strings("notes")
        if !notes.isEmpty {
            lines.append("")
            lines.append("Notes:")
            lines += notes.map { "  - \($0)" }
        }
        lines.append("")
        let reachable = settings.pluginFolders.contains {
            folder.deletingLastPathComponent().standardizedFileURL.path == $0.standardizedFileURL.path
        }
        lines.append(
            "plugin.toml loads (checked as apimacro plugins show \(manifest.name) does)."
                + (reachable || !explicitFolder
                    ? ""
                    : " Its folder is not on the plugin path: add \(folder.deletingLastPathComponent().path) to APIMACRO_PLUGINS to use it.")
        )
        return lines.joined(separator: "\n")
    }

    /// `petstore` → `PetstoreClient` (as `apimacro._openapi` names the stub's class).
    static func className(_ name: String) -> String {
        name.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined() + "Client"
    }
}
