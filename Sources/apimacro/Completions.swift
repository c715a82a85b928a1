import Clients
import MacroRuntime
import Platform
import PluginHost

/// Shell completion of names (`apimacro --generate-completion-script bash|zsh|fish`):
/// the generated script calls back into the binary, which answers from the macro path
/// and the plugin folders.
///
/// A broken configuration completes nothing rather than fail.
enum Completions {
    /// Macro names on the macro path, and `.py` files and folders under what was typed (`run`).
    @Sendable static func macroNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        var names = files(prefix)
        guard !prefix.contains("/"), let settings = try? Settings.load() else { return names }
        names += MacroLocator(settings: settings).searchPath.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasSuffix(".py") && !$0.hasPrefix("_") }
                .map { String($0.dropLast(3)) }
        }
        return matching(names, prefix)
    }

    /// `.py` files and folders (with a trailing `/`) in the folder `prefix` points into.
    private static func files(_ prefix: String) -> [String] {
        let slash = prefix.lastIndex(of: "/")
        let folder = slash.map { String(prefix[...$0]) } ?? ""
        let fileManager = FileManager.default
        return ((try? fileManager.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []).compactMap {
            entry in
            var isDirectory = false
            guard !entry.hasPrefix("."), fileManager.fileExists(atPath: folder + entry, isFolder: &isDirectory)
            else { return nil }
            if isDirectory { return folder + entry + "/" }
            return entry.hasSuffix(".py") ? folder + entry : nil
        }.filter { $0.hasPrefix(prefix) }
    }

    /// The loaded plugins' names (`plugins show`).
    @Sendable static func pluginNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        guard let settings = try? Settings.load() else { return [] }
        return matching(PluginCatalog(settings: settings).registry.plugins.map(\.name), prefix)
    }

    /// The clients one logs in to (`login`, `logout`): the built-in ones with a login, and the plugins.
    @Sendable static func loginNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        Logins.loginNames.filter { $0.hasPrefix(prefix) } + pluginNames(words, index, prefix)
    }

    private static func matching(_ names: [String], _ prefix: String) -> [String] {
        Array(Set(names.filter { $0.hasPrefix(prefix) })).sorted()
    }
}
