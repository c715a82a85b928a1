import Clients
public import Platform
import WebAPI

/// The plugins found in the plugin folders: those that loaded, and those that
/// did not with the reason.
///
/// A plugin that fails never stops the others.
public struct PluginRegistry: Sendable {
    /// A plugin folder that could not be loaded.
    public struct Failure: Sendable {
        /// The plugin's name as far as it could be read (its `name`, else its folder's name).
        public let name: String
        /// The plugin's folder.
        public let folder: URL
        /// What is wrong, with the file and the key.
        public let error: PluginError
    }

    /// A plugin that loaded but is not used: a plugin of the same name in a folder searched
    /// before its own wins (a user's `openweather` in `$APIMACRO_HOME/plugins` over the shipped
    /// one).
    public struct Override: Sendable {
        /// The name both plugins declare.
        public let name: String
        /// The plugin folder that is not used.
        public let folder: URL
        /// The plugin folder used instead.
        public let winner: URL
    }

    /// The folders searched, in order.
    public let folders: [URL]
    /// The plugins that loaded, sorted by name.
    public let plugins: [PluginManifest]
    /// The plugin folders that did not load, in the order found.
    public let failures: [Failure]
    /// The plugins that loaded but lost to one of the same name found earlier in the search
    /// order, in the order found.
    public let overridden: [Override]

    /// No plugins.
    public static let empty = PluginRegistry(folders: [], plugins: [], failures: [], overridden: [])

    /// Loads every plugin folder (a folder holding `plugin.toml`) found in
    /// `folders`, in order; missing folders are skipped.
    ///
    /// When two plugins share a name, the first one found wins: the other is overridden when
    /// it comes from a later folder of `folders` (the search order is the precedence), and a
    /// failure when both sit in one folder; one that takes a built-in client's name
    /// (`reservedNames`) is a failure too.
    public static func load(folders: [URL], reservedNames: Set<String>) -> PluginRegistry {
        var plugins: [PluginManifest] = []
        var failures: [Failure] = []
        var overridden: [Override] = []
        // The index in `folders` each loaded plugin came from, by name.
        var searchIndex: [String: Int] = [:]
        let fileManager = FileManager.default
        for (index, folder) in folders.enumerated() {
            var candidates: [URL]
            if fileManager.fileExists(atPath: folder.appendingPathComponent("plugin.toml").path) {
                candidates = [folder]
            } else {
                let names = (try? fileManager.contentsOfDirectory(atPath: folder.path)) ?? []
                candidates = names.filter { !$0.hasPrefix(".") && !$0.hasPrefix("_") }.sorted().map {
                    folder.appendingPathComponent($0)
                }
                .filter { url in
                    var isDirectory = false
                    return fileManager.fileExists(atPath: url.path, isFolder: &isDirectory) && isDirectory
                }
            }
            for candidate in candidates {
                do {
                    let manifest = try PluginManifest.load(folder: candidate, reservedNames: reservedNames)
                    if let first = plugins.first(where: { $0.name == manifest.name }) {
                        if let winnerIndex = searchIndex[manifest.name], winnerIndex < index {
                            overridden.append(
                                Override(name: manifest.name, folder: candidate, winner: first.folder))
                            continue
                        }
                        throw PluginError(
                            file: manifest.file.path, key: "name",
                            "plugin \"\(manifest.name)\" is already loaded from \(first.file.path); rename this one (name = \"\(manifest.name)_2\") or remove one of the folders"
                        )
                    }
                    plugins.append(manifest)
                    searchIndex[manifest.name] = index
                } catch let error as PluginError {
                    failures.append(Failure(name: guessName(candidate), folder: candidate, error: error))
                } catch {
                    failures.append(
                        Failure(
                            name: guessName(candidate), folder: candidate,
                            error: PluginError(file: candidate.path, key: nil, SystemErrorText.reason(error))))
                }
            }
        }
        return PluginRegistry(
            folders: folders, plugins: plugins.sorted { $0.name < $1.name }, failures: failures, overridden: overridden)
    }

    /// The loaded plugin called `name`.
    public func plugin(named name: String) -> PluginManifest? { plugins.first { $0.name == name } }

    /// Why the plugin called `name` (or in a folder called `name`) did not load, if it did not.
    public func failure(named name: String) -> Failure? { failures.first { $0.name == name } }

    /// Every loaded plugin's `macros/` folder, in name order.
    public var macroFolders: [URL] { plugins.compactMap(\.macrosFolder) }

    /// The declared name when the file parses that far, else the folder's name.
    private static func guessName(_ folder: URL) -> String {
        if let data = FileManager.default.contents(atPath: folder.appendingPathComponent("plugin.toml").path),
            let text = String(data: data, encoding: .utf8),
            case .string(let name)? = (try? TOMLValue.parse(text))?["name"]
        {
            return name
        }
        return folder.lastPathComponent
    }

    /// The plugin folders in search order (SPEC §2): each entry of
    /// `APIMACRO_PLUGINS` (colon-separated), `<home>/plugins`, then the
    /// repository's `plugins/` when apimacro runs from a checkout.
    public static func folders(environment: [String: String], home: URL, executable: URL) -> [URL] {
        let extra = (environment["APIMACRO_PLUGINS"] ?? "").split(separator: ":").map {
            URL(fileURLWithPath: String($0))
        }
        return extra + [home.appendingPathComponent("plugins")]
            + [repositoryFolder(executable: executable)].compactMap { $0 }
    }

    /// The plugins shipped with apimacro: an installed `PREFIX/share/apimacro/plugins` beside
    /// `PREFIX/bin/apimacro` (the real path of the executable); else, walking up from the
    /// executable's folder, the first folder holding both `Package.swift` and `plugins/` (a
    /// checkout, with the binary in `.build/…`).
    ///
    /// A binary installed with its plugins never looks above its prefix: a `plugins/` folder
    /// there is not its own.
    public static func repositoryFolder(executable: URL) -> URL? {
        // Walked as path text: `URL`'s path operations cost ~20 k instructions each, and this
        // runs at every start (0.5 M of an empty macro's 41 M before).
        let fileManager = FileManager.default
        let binDirectory = parent(of: executable.resolvingSymlinksInPath().path)
        let installed = join(parent(of: binDirectory), "share/apimacro/plugins")
        if fileManager.fileExists(atPath: installed) { return URL(fileURLWithPath: installed, isDirectory: true) }
        var folder = binDirectory
        for _ in 0..<8 {
            let plugins = join(folder, "plugins")
            if fileManager.fileExists(atPath: join(folder, "Package.swift")), fileManager.fileExists(atPath: plugins) {
                return URL(fileURLWithPath: plugins, isDirectory: true)
            }
            let up = parent(of: folder)
            if up == folder { break }
            folder = up
        }
        return nil
    }

    /// The folder holding `path` (an absolute path), as `deletingLastPathComponent` gives it:
    /// `/` for `/` and for a name right under it.
    static func parent(of path: String) -> String {
        let slash = UInt8(ascii: "/")
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == slash { bytes.removeLast() }
        guard var end = bytes.lastIndex(of: slash) else { return "." }
        while end > 0, bytes[end - 1] == slash { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// `name` under the folder `folder` (which ends in no `/` unless it is `/`).
    private static func join(_ folder: String, _ name: String) -> String {
        folder == "/" ? "/" + name : folder + "/" + name
    }
}
