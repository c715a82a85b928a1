import Foundation
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
        [
            settings.workingDirectory.appendingPathComponent("macros"),
            settings.home.appendingPathComponent("macros"),
        ] + PluginRegistry.load(settings: settings).macroFolders + extraFolders
    }

    public init(settings: Settings, extraFolders: [URL] = []) {
        self.settings = settings
        self.extraFolders = extraFolders
    }

    /// The file for `name`: a path when it names an existing file (or has a
    /// `/` or ends in `.py`), else `NAME.py` in the first folder that has it.
    public func locate(_ name: String, relativeTo directory: URL) throws -> URL {
        let fileManager = FileManager.default
        let isPath = name.contains("/") || name.hasSuffix(".py")
        let direct = (name.hasPrefix("/") ? URL(fileURLWithPath: name) : directory.appendingPathComponent(name))
            .standardizedFileURL
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: direct.path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue else { throw MacroError("\(name) is a folder, not a macro file") }
            return direct
        }
        if isPath { throw MacroError("no such macro file: \(name)") }
        let searchPath = self.searchPath
        for folder in searchPath {
            let candidate = folder.appendingPathComponent(name + ".py")
            if fileManager.fileExists(atPath: candidate.path) { return candidate }
        }
        let looked = searchPath.map { $0.path }.joined(separator: ", ")
        throw MacroError("no macro named '\(name)' (looked in \(looked)); give a path to a .py file")
    }
}
