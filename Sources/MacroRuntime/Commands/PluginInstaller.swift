import Clients
import Platform
import PluginHost
import Spawning
import WebAPI

/// `apimacro plugins install | upgrade | remove`: plugins shared as git repositories, as
/// `gh extension` shares tools.
///
/// An install clones the repository into a folder beside the installed plugins
/// (`$APIMACRO_HOME/plugins/.install-…`), checks out `--pin REF` if given, loads its
/// `plugin.toml` (the same validation `plugins show` does), refuses a name that a built-in
/// client or another plugin has, replays its self-test when it ships one, and only then moves
/// the folder into place: a failed install leaves nothing behind and changes nothing installed.
/// Where it came from is kept in the plugin's `.apimacro-source.json` (source, commit, pin).
///
/// git runs with only the https, http, git, ssh and file transports allowed (`ext::` and
/// other command-running transports are refused), no prompt, no submodules, no hooks of the
/// repository's, and no environment of the user's but `PATH`, `HOME` and the proxy variables.
public struct PluginInstaller: Sendable {
    let settings: Settings

    public init(settings: Settings) {
        self.settings = settings
    }

    /// The folder plugins are installed into: `$APIMACRO_HOME/plugins`.
    var folder: URL { settings.home.appendingPathComponent("plugins") }

    /// What `.apimacro-source.json` holds.
    struct Source: Codable, Equatable {
        /// The URL cloned.
        var source: String
        /// The commit checked out.
        var commit: String
        /// `--pin REF`, when the install was pinned: `upgrade` leaves it.
        var pin: String?
    }

    static let sourceFile = ".apimacro-source.json"

    /// The URL of `source`: a git URL as given, a local folder, or `OWNER/REPO` on `host`
    /// (github.com by default).
    static func url(of source: String, host: String?) throws -> String {
        let lowered = source.lowercased()
        if lowered.contains("::") {
            throw ExitReport.usage(
                "plugins install: '\(source)' names a git transport apimacro does not use; give an https://, "
                    + "git:// or ssh:// URL, or OWNER/REPO")
        }
        for scheme in ["https://", "http://", "git://", "ssh://", "file://"] where lowered.hasPrefix(scheme) {
            // A password in the URL would be kept in the plugin's .apimacro-source.json and could
            // come back in git's messages: credentials go through git's own helpers instead.
            if let password = URLComponents(string: source)?.password, !password.isEmpty {
                throw ExitReport.usage(
                    "plugins install: the URL holds a password; give git the credential through its credential "
                        + "helper (git config credential.helper) or use ssh, and the URL without it")
            }
            return source
        }
        if source.hasPrefix("/") || source.hasPrefix("./") || source.hasPrefix("../") { return source }
        if source.prefixMatch(of: /[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:/) != nil { return source }
        let parts = source.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2,
            parts.allSatisfy({ part in
                !part.isEmpty && part != "." && part != ".."
                    && part.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
            })
        else {
            throw ExitReport.usage(
                "plugins install: '\(source)' is neither a git URL nor OWNER/REPO; "
                    + "e.g. apimacro plugins install octo/apimacro-weather")
        }
        let name = parts[1].hasSuffix(".git") ? String(parts[1]) : "\(parts[1]).git"
        return "https://\(host ?? "github.com")/\(parts[0])/\(name)"
    }

    /// Installs the plugin at `source`; returns the line to print.
    public func install(_ source: String, pin: String?, host: String?) throws -> String {
        let url = try Self.url(of: source, host: host)
        let staged = try stage(url: url, pin: pin)
        defer { try? FileManager.default.removeItem(at: staged.folder) }
        let target = folder.appendingPathComponent(staged.manifest.name)
        guard !FileManager.default.fileExists(atPath: target.path) else {
            throw ExitReport.failure(
                "plugins install: a plugin named '\(staged.manifest.name)' is already installed in \(target.path); "
                    + "apimacro plugins upgrade \(staged.manifest.name) updates it, or remove it first")
        }
        try FileManager.default.moveItem(at: staged.folder, to: target)
        return "installed \(staged.manifest.name) from \(Redactor(secrets: []).redactURL(url)) at "
            + "\(staged.commit.prefix(12))\(pin.map { " (pinned to \($0))" } ?? "") in \(target.path)"
    }

    /// Upgrades `name` (or every installed plugin with `all`), skipping pinned ones; returns the
    /// lines to print.
    public func upgrade(_ name: String?, all: Bool) throws -> [String] {
        let installed = try installedPlugins()
        let chosen: [(String, Source)]
        if all {
            chosen = installed
        } else if let name {
            guard let found = installed.first(where: { $0.0 == name }) else {
                throw ExitReport.usage(
                    "plugins upgrade: '\(name)' was not installed with plugins install"
                        + (installed.isEmpty ? "" : "; installed: \(installed.map(\.0).joined(separator: ", "))"))
            }
            chosen = [found]
        } else {
            throw ExitReport.usage("plugins upgrade: name a plugin, or give --all")
        }
        var lines: [String] = []
        for (name, source) in chosen {
            if let pin = source.pin {
                lines.append("\(name): pinned to \(pin), left as it is (install it again without --pin to follow)")
                continue
            }
            let staged = try stage(url: source.source, pin: nil, keeping: name)
            defer { try? FileManager.default.removeItem(at: staged.folder) }
            guard staged.commit != source.commit else {
                lines.append("\(name): up to date at \(source.commit.prefix(12))")
                continue
            }
            let target = folder.appendingPathComponent(name)
            let old = folder.appendingPathComponent(".old-\(name)-\(UUID().uuidString.prefix(8))")
            try FileManager.default.moveItem(at: target, to: old)
            do {
                try FileManager.default.moveItem(at: staged.folder, to: target)
            } catch {
                try? FileManager.default.moveItem(at: old, to: target)
                throw ExitReport.failure("plugins upgrade: cannot put \(name) in place (\(Self.describe(error)))")
            }
            try? FileManager.default.removeItem(at: old)
            lines.append("\(name): upgraded \(source.commit.prefix(12)) → \(staged.commit.prefix(12))")
        }
        return lines.isEmpty ? ["no plugin was installed with plugins install"] : lines
    }

    /// Removes the installed plugin `name`; returns the line to print.
    public func remove(_ name: String) throws -> String {
        let target = folder.appendingPathComponent(name)
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix("."),
            FileManager.default.fileExists(atPath: target.appendingPathComponent("plugin.toml").path)
        else {
            let installed = (try? installedPlugins().map(\.0)) ?? []
            throw ExitReport.usage(
                "plugins remove: no plugin '\(name)' in \(folder.path)"
                    + (installed.isEmpty ? "" : "; installed: \(installed.joined(separator: ", "))"))
        }
        try FileManager.default.removeItem(at: target)
        return "removed \(name) (\(target.path))"
    }

    /// The plugins in `folder` that `install` put there, with where they came from.
    func installedPlugins() throws -> [(String, Source)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().compactMap { name -> (String, Source)? in
            guard !name.hasPrefix(".") else { return nil }
            let file = folder.appendingPathComponent(name).appendingPathComponent(Self.sourceFile)
            guard let data = FileManager.default.contents(atPath: file.path),
                let source = try? JSONDecoder().decode(Source.self, from: data)
            else { return nil }
            return (name, source)
        }
    }

    /// What `plugins list` adds for installed plugins (name, source, commit, pin), aligned;
    /// nil when none is installed.
    public func listingText() -> String? {
        let rows = ((try? installedPlugins()) ?? []).map { name, source in
            [name, Redactor(secrets: []).redactURL(source.source), String(source.commit.prefix(12)), source.pin ?? "-"]
        }
        guard !rows.isEmpty else { return nil }
        let table = [["NAME", "SOURCE", "COMMIT", "PINNED"]] + rows
        let widths = (0..<3).map { column in table.map { $0[column].count }.max() ?? 0 }
        return table.map { row in
            ((0..<3).map { row[$0].padded(toLength: widths[$0]) } + [row[3]])
                .joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// A clone of `url` at `pin` (else its default branch), checked, in a folder of its own.
    private func stage(url: String, pin: String?, keeping name: String? = nil) throws -> (
        folder: URL, manifest: PluginManifest, commit: String
    ) {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw ExitReport.failure("plugins: cannot make \(folder.path) (\(Self.describe(error)))")
        }
        let staged = folder.appendingPathComponent(".install-\(UUID().uuidString.prefix(8))")
        do {
            try git(["clone", "--quiet", "--no-recurse-submodules", "--", url, staged.path], what: "clone \(url)")
            if let pin {
                try git(["-C", staged.path, "checkout", "--quiet", "--detach", pin], what: "check out \(pin)")
            }
            let commit = try git(["-C", staged.path, "rev-parse", "HEAD"], what: "read the commit")
                .trimmingWhitespaceAndNewlines()
            let manifest: PluginManifest
            do {
                manifest = try PluginManifest.load(folder: staged, reservedNames: BuiltInClients.names)
            } catch let error as PluginError {
                throw ExitReport.failure("plugins install: the repository's plugin.toml does not load: \(error)")
            }
            if let name, manifest.name != name {
                throw ExitReport.failure(
                    "plugins upgrade: the repository's plugin is now named '\(manifest.name)', not '\(name)'; "
                        + "remove \(name) and install it again")
            }
            if name == nil {
                let registry = PluginRegistry.load(settings: settings)
                if let other = registry.plugin(named: manifest.name) {
                    throw ExitReport.failure(
                        "plugins install: the repository's plugin '\(manifest.name)' has the name of the plugin in "
                            + "\(other.folder.path); remove that one first, or rename this one")
                }
            }
            try selfTest(staged, manifest: manifest)
            let record = Source(source: url, commit: commit, pin: pin)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(record).write(to: staged.appendingPathComponent(Self.sourceFile))
            return (staged, manifest, commit)
        } catch {
            try? FileManager.default.removeItem(at: staged)
            if error is ExitReport { throw error }
            throw ExitReport.failure("plugins install: \(Self.describe(error))")
        }
    }

    /// Replays the plugin's self-test when it ships one (`selftest.py` and
    /// `cassettes/selftest.har`), with apimacro itself, against nothing but the recording.
    private func selfTest(_ staged: URL, manifest: PluginManifest) throws {
        let macro = staged.appendingPathComponent("selftest.py")
        let cassette = staged.appendingPathComponent("cassettes/selftest.har")
        guard FileManager.default.fileExists(atPath: macro.path), FileManager.default.fileExists(atPath: cassette.path)
        else { return }
        // The plugin is loaded from a folder of its own name, as it will be once installed.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apimacro-selftest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: scratch.appendingPathComponent(manifest.name), withDestinationURL: staged)
        var environment = settings.environment
        environment["APIMACRO_PLUGINS"] = scratch.path
        // The recording was made against the manifest's base URL, not a user's override.
        environment[manifest.environmentPrefix + "_URL"] = nil
        let (status, output) = try run(
            PythonPackage.executable.path, ["run", "--replay", cassette.path, "--no-cache", macro.path],
            environment: environment, in: staged)
        guard status == 0 else {
            throw ExitReport.failure(
                "plugins install: the plugin's self-test (selftest.py replaying cassettes/selftest.har) failed; "
                    + "nothing was installed:\n" + output.suffix(2000))
        }
    }

    /// Runs git with `arguments`; its stdout, or an error naming `what` with git's message.
    @discardableResult
    private func git(_ arguments: [String], what: String) throws -> String {
        var environment = ["PATH": settings.environment["PATH"] ?? "/usr/bin:/bin"]
        for name in ["HOME", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"] {
            if let value = settings.environment[name] { environment[name] = value }
        }
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["GIT_ALLOW_PROTOCOL"] = "https:http:git:ssh:file"
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        let (status, output) = try run(
            "/usr/bin/env", ["git", "-c", "core.hooksPath=/dev/null", "-c", "submodule.recurse=false"] + arguments,
            environment: environment, in: nil)
        guard status == 0 else {
            let message = Redactor(secrets: []).redact(
                output.split(separator: "\n").filter { !$0.isEmpty }.suffix(3).joined(separator: "; "))
            if status == 127 {
                throw ExitReport.failure("plugins install needs git: apt-get install git")
            }
            let shown = String(decoding: TerminalText.escapingControls(Array(message.utf8)), as: UTF8.self)
            throw ExitReport.failure("plugins install: git could not \(what): \(shown)")
        }
        return output
    }

    /// Runs `executable` and waits for it; its exit status (or the signal that ended it) and what
    /// it wrote (stdout and stderr, interleaved).
    ///
    /// In `directory` through GNU env's `--chdir`: `posix_spawn` has no portable working folder.
    private func run(_ executable: String, _ arguments: [String], environment: [String: String], in directory: URL?)
        throws -> (Int32, String)
    {
        let (program, argv) =
            directory.map { ("/usr/bin/env", ["--chdir=\($0.path)", executable] + arguments) } ?? (
                executable, arguments
            )
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw ExitReport.failure("cannot start \(executable) (\(String(cString: strerror(errno))))")
        }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        let process: Subprocess
        do {
            process = try Subprocess.spawn(
                program, argv, environment: environment, stdout: .descriptor(ends[1]), stderr: .descriptor(ends[1]))
        } catch {
            _ = close(ends[0])
            _ = close(ends[1])
            throw ExitReport.failure(error.description)
        }
        _ = close(ends[1])
        let output = DescriptorIO.readAll(ends[0], limit: .max)
        _ = close(ends[0])
        let status: Int32
        switch process.wait() {
        case .exited(let code)?: status = code
        case .signaled(let signal)?: status = signal
        case nil: status = -1
        }
        return (status, String(decoding: output, as: UTF8.self))
    }

    /// An error in words, without Foundation's domain and code.
    static func describe(_ error: any Error) -> String { SystemErrorText.describe(error) }
}
