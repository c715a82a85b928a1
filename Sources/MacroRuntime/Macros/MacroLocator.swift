import Clients
public import Platform
import PluginHost

/// Resolves what a user typed after `apimacro run` to a macro file.
public struct MacroLocator: Sendable {
    private let settings: Settings
    private let extraFolders: [URL]

    /// Folders searched for a macro given by name, in order: `./macros/`, then
    /// `$APIMACRO_HOME/macros/`, then each loaded plugin's `macros/` (in plugin
    /// name order), then the extra folders.
    ///
    /// Reading it reads the plugins' manifests, so a macro given as a path never
    /// does.
    public var searchPath: [URL] {
        searchPath(PluginRegistry.load(settings: settings))
    }

    public init(settings: Settings, extraFolders: [URL] = []) {
        self.settings = settings
        self.extraFolders = extraFolders
    }

    private func searchPath(_ plugins: PluginRegistry) -> [URL] {
        [
            settings.workingDirectory.appendingPathComponent("macros"),
            settings.home.appendingPathComponent("macros"),
        ] + plugins.macroFolders + extraFolders
    }

    /// The file for `name`.
    ///
    /// A name with a `/` or ending in `.py` is a path (relative to `directory`). Any other name
    /// is a macro's: `NAME.py` in the first folder of the search path that has it, else a file
    /// of that name in `directory` (a script without `.py`); a file or folder in `directory`
    /// never hides the macro of the same name.
    ///
    /// - Throws: `MacroError` saying what was looked for and where, and what to type instead
    ///   when that is clear (`apimacro run stars` for `stars.py` that is a macro's name, the
    ///   plugin that did not load for a macro in its folder).
    public func locate(_ name: String, relativeTo directory: URL) throws -> URL {
        let direct = (name.hasPrefix("/") ? URL(fileURLWithPath: name) : directory.appendingPathComponent(name))
            .standardizedFileURL
        let found = Self.kind(of: direct)
        if name.contains("/") || name.hasSuffix(".py") {
            switch found {
            case .file: return direct
            case .folder: throw MacroError("\(name) is a folder, not a macro file")
            case nil: throw MacroError("no such macro file: \(name)\(pathHint(name))")
            }
        }
        let plugins = PluginRegistry.load(settings: settings)
        let searchPath = self.searchPath(plugins)
        if let macro = Self.macro(name, in: searchPath) { return macro }
        if found == .file { return direct }
        let looked = searchPath.map(\.path).joined(separator: ", ")
        if let unloaded = Self.unloadedPlugin(holding: name, in: plugins) { throw MacroError(unloaded) }
        if found == .folder {
            throw MacroError(
                "\(name) is a folder, not a macro file, and no macro is named '\(name)' (looked in \(looked))")
        }
        let hint = NearMiss.suggestion(for: name, among: Self.macroNames(in: searchPath)).map {
            "; did you mean '\($0)'?"
        }
        throw MacroError("no macro named '\(name)'\(hint ?? "") (looked in \(looked)); give a path to a .py file")
    }

    /// The names of the macros in `folders` (`NAME` of each `NAME.py`).
    static func macroNames(in folders: [URL]) -> [String] {
        folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).compactMap { file in
                file.hasSuffix(".py") && file.count > 3 ? String(file.dropLast(3)) : nil
            }
        }
    }

    /// What `path` names on disk: a file, a folder, or nothing.
    private enum Kind { case file, folder }

    private static func kind(of path: URL) -> Kind? {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path.path, isFolder: &isDirectory) else { return nil }
        return isDirectory ? .folder : .file
    }

    /// `NAME.py` in the first of `folders` that has it.
    private static func macro(_ name: String, in folders: [URL]) -> URL? {
        folders.map { $0.appendingPathComponent(name + ".py") }.first { kind(of: $0) == .file }
    }

    /// For a path that does not exist: the macro of the same name when there is one
    /// (`stars.py` → `apimacro run stars`).
    private func pathHint(_ name: String) -> String {
        let path = URL(fileURLWithPath: name, relativeTo: settings.workingDirectory)
        if name.hasSuffix(".py"),
            let near = NearMiss.suggestion(
                for: path.lastPathComponent,
                among: ((try? FileManager.default.contentsOfDirectory(atPath: path.deletingLastPathComponent().path))
                    ?? []).filter { $0.hasSuffix(".py") })
        {
            let shown = name.contains("/") ? PathText.deletingLastComponent(name) + "/" + near : near
            return "; did you mean '\(shown)'?"
        }
        guard !name.contains("/"), name.hasSuffix(".py") else { return "" }
        let bare = String(name.dropLast(3))
        guard !bare.isEmpty, let macro = Self.macro(bare, in: searchPath) else { return "" }
        return "; the macro '\(bare)' is \(macro.path): run it by name, apimacro run \(bare)"
    }

    /// Why a macro called `name` in a plugin's `macros/` is not on the search path: its plugin
    /// did not load, or another plugin of the same name is used instead; nil when no such
    /// plugin holds it.
    private static func unloadedPlugin(holding name: String, in plugins: PluginRegistry) -> String? {
        func holds(_ folder: URL) -> Bool {
            kind(of: folder.appendingPathComponent("macros").appendingPathComponent(name + ".py")) == .file
        }
        if let failure = plugins.failures.first(where: { holds($0.folder) }) {
            return "the macro '\(name)' is in the plugin '\(failure.name)' (\(failure.folder.path)), "
                + "which did not load: \(failure.error)"
        }
        if let override = plugins.overridden.first(where: { holds($0.folder) }) {
            return "the macro '\(name)' is in the plugin '\(override.name)' at \(override.folder.path), which is "
                + "not used: the plugin of the same name at \(override.winner.path) overrides it (run the macro by "
                + "its path, or copy it into \(override.winner.appendingPathComponent("macros").path))"
        }
        return nil
    }
}
