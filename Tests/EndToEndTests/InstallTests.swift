import Foundation
import Testing

/// scripts/install and scripts/package (issue 27), run on the binary the suite
/// already built: no second swift build.
///
/// The man page is the one part left out (`--no-man-page`): swift-argument-parser's
/// generate-manual is not built by `swift build --build-tests`, and building it here would be
/// that second build; `dumpHelp` checks what the generator reads.
@Suite("install like other tools: scripts/install and scripts/package")
struct InstallTests {
    static let repository = ExampleReplayTests.repository

    static func script(_ name: String) -> String {
        repository.appendingPathComponent("scripts").appendingPathComponent(name).path
    }

    /// Runs a program other than apimacro (a script, dpkg-deb) in the workspace, with the clean
    /// environment the binary gets.
    static func execute(
        _ program: String, _ arguments: [String], in space: Workspace, environment: [String: String] = [:]
    ) async throws -> RunResult {
        try await Binary.run(
            arguments, in: space.url, environment: environment, limit: 600,
            executable: URL(fileURLWithPath: program))
    }

    /// The files under `folder`, as paths relative to it, without Python's caches.
    static func files(under folder: URL) -> Set<String> {
        let base = folder.resolvingSymlinksInPath().path + "/"
        let enumerator = FileManager.default.enumerator(
            at: folder.resolvingSymlinksInPath(), includingPropertiesForKeys: [.isRegularFileKey])
        var found: Set<String> = []
        while let url = enumerator?.nextObject() as? URL {
            let path = url.resolvingSymlinksInPath().path
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                path.hasPrefix(base), !path.contains("/__pycache__/"), !path.hasSuffix(".pyc")
            else { continue }
            found.insert(String(path.dropFirst(base.count)))
        }
        return found
    }

    /// What each installed example prints when replayed from its installed cassette: the recorded output.
    static func expectReplays(_ names: [String], share: URL, executable: URL, in space: Workspace) async throws {
        let examples = share.appendingPathComponent("apimacro/examples")
        for name in names {
            let cassette = try #require(ExampleReplayTests.all.first { $0.name == name })
            let result = try await Binary.run(
                [
                    "run", "--format", "csv", "--replay", examples.appendingPathComponent("cassettes/\(name).har").path,
                    examples.appendingPathComponent(cassette.example).path,
                ] + cassette.arguments, in: space.url, executable: executable)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(result.stdout == (try cassette.expectedOutput()), "\(name)")
        }
    }

    @Test(
        "scripts/package: a .deb named from --version and the architecture, Debian's libraries as Depends; unpacked, it runs macros offline"
    )
    func package() async throws {
        let space = try Workspace()
        defer { space.remove() }
        // A debug build loads the toolchain's Swift runtime, which no Debian package provides;
        // a release build links it in. Without the flag the script refuses such a binary.
        let arguments = ["--binary", Binary.url.path, "--no-man-page", "--output", space.url.path]
        let refused = try await Self.execute(Self.script("package"), arguments, in: space)
        let unpackaged = try await Self.execute("/usr/bin/ldd", [Binary.url.path], in: space)
        if unpackaged.stdout.contains("libswiftCore.so") {
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("libraries no Debian package provides"), "\(refused.stderr)")
        }
        let packaged = try await Self.execute(
            Self.script("package"), arguments + ["--allow-unpackaged-libraries"], in: space)
        #expect(packaged.status == 0, "\(packaged.stderr)")

        let version = try await Binary.run(["--version"], in: space.url).stdout
        let number = try #require(version.split(separator: "\n").first?.split(separator: " ").last)
        let architecture = try await Self.execute("/usr/bin/dpkg", ["--print-architecture"], in: space).stdout
        let deb = space.url.appendingPathComponent(
            "apimacro_\(number)_\(architecture.trimmingCharacters(in: .whitespacesAndNewlines)).deb")
        #expect(packaged.stdout == deb.path + "\n")

        // Depends: Debian's packages of the libraries, each one dpkg knows by that name.
        let depends = try await Self.execute("/usr/bin/dpkg-deb", ["--field", deb.path, "Depends"], in: space).stdout
        let names = depends.split(separator: ",").compactMap {
            $0.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").first.map(String.init)
        }
        for name in ["libcurl4", "libjq1", "libpq5", "libsqlite3-0", "ca-certificates"] {
            #expect(names.contains(name), "\(depends)")
        }
        #expect(names.contains { $0.hasPrefix("libpython3.") }, "\(depends)")
        #expect(names.contains { $0.hasPrefix("libhiredis") }, "\(depends)")
        for name in names {
            let known = try await Self.execute("/usr/bin/dpkg-query", ["--show", name], in: space)
            #expect(known.status == 0, "\(name) is no package dpkg knows: \(known.stderr)")
        }

        // The file list: owned by root, no Python caches, the package and plugins whole.
        let listing = try await Self.execute("/usr/bin/dpkg-deb", ["--contents", deb.path], in: space).stdout
        let entries = listing.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(entries.allSatisfy { $0.count >= 6 && $0[1] == "root/root" }, "\(listing)")
        let paths = Set(entries.compactMap { $0.last.map { String($0.dropFirst(2)) } })
        for path in [
            "usr/bin/apimacro", "usr/share/bash-completion/completions/apimacro",
            "usr/share/zsh/vendor-completions/_apimacro", "usr/share/fish/vendor_completions.d/apimacro.fish",
        ] {
            #expect(paths.contains(path), "\(listing)")
        }
        #expect(!paths.contains { $0.contains("__pycache__") || $0.hasSuffix(".pyc") })
        let python = Self.files(under: Self.repository.appendingPathComponent("Sources/MacroRuntime/Python/apimacro"))
        #expect(python.contains("__init__.py"))
        let folder = "usr/share/apimacro/python/apimacro/"
        let shipped = paths.filter { $0.hasPrefix(folder) && !$0.hasSuffix("/") }.map {
            String($0.dropFirst(folder.count))
        }
        #expect(python == Set(shipped))
        let plugins = Self.files(under: Self.repository.appendingPathComponent("plugins"))
        #expect(plugins.map { "usr/share/apimacro/plugins/" + $0 }.allSatisfy(paths.contains))

        // Unpacked in a scratch root (no dpkg database, no root): the binary in ROOT/usr/bin finds
        // ROOT/usr/share/apimacro, stripped as installed.
        let root = space.url.appendingPathComponent("root")
        let unpacked = try await Self.execute("/usr/bin/dpkg-deb", ["--extract", deb.path, root.path], in: space)
        #expect(unpacked.status == 0, "\(unpacked.stderr)")
        let installed = root.appendingPathComponent("usr/bin/apimacro")
        let sections = try await Self.execute(
            "/usr/bin/readelf", ["--section-headers", "--wide", installed.path], in: space)
        #expect(sections.status == 0 && !sections.stdout.contains(".symtab"), "not stripped")
        let share = root.appendingPathComponent("usr/share")
        try await Self.expectReplays(["hello", "github-profile"], share: share, executable: installed, in: space)
        // Numbers, dates and URLs as the built binary writes them (issue 43: off Foundation and ICU).
        let formats = try Workspace()
        defer { formats.remove() }
        try FormattingSnapshotTests.expectSnapshot(
            try await FormattingSnapshotTests.numbersText(in: formats, executable: installed),
            named: "formatting_numbers.txt", record: false)
        let cassette = share.appendingPathComponent("apimacro/examples/cassettes/github-profile.har")
        try FormattingSnapshotTests.expectSnapshot(
            try await FormattingSnapshotTests.datesAndURLsText(cassette: cassette, in: formats, executable: installed),
            named: "formatting_dates_urls.txt", record: false)
        let plugin = try await Binary.run(["plugins", "show", "openweather"], in: space.url, executable: installed)
        #expect(
            plugin.stdout.contains("manifest:     \(share.path)/apimacro/plugins/openweather/plugin.toml"),
            "\(plugin.stdout)")
    }

    @Test(
        "scripts/install lays out PREFIX; the binary finds its files there, through a symlink too, and not in a checkout above"
    )
    func install() async throws {
        let space = try Workspace()
        defer { space.remove() }
        // What looks like a checkout above PREFIX, with a plugin of its own: the installed binary
        // uses its own plugins, not these.
        try space.write("tree/Package.swift", "// swift-tools-version: 6.0\n")
        try space.write(
            "tree/plugins/decoy/plugin.toml",
            "name = \"decoy\"\ndescription = \"Not shipped\"\nbase_url = \"https://example.com\"\n\n"
                + "[endpoints.item]\npath = \"/item\"\n")
        let prefix = space.url.appendingPathComponent("tree/prefix")
        let arguments = ["--binary", Binary.url.path, "--no-man-page", prefix.path]
        let first = try await Self.execute(Self.script("install"), arguments, in: space)
        #expect(first.status == 0, "\(first.stderr)")
        // A file an earlier install left is gone after the next one.
        try space.write("tree/prefix/share/apimacro/plugins/stale/plugin.toml", "name = \"stale\"\n")
        let second = try await Self.execute(Self.script("install"), arguments, in: space)
        #expect(second.status == 0, "\(second.stderr)")
        let share = prefix.appendingPathComponent("share")
        #expect(!FileManager.default.fileExists(atPath: share.appendingPathComponent("apimacro/plugins/stale").path))

        let modes = [
            "bin/apimacro": 0o755, "share/apimacro/python/apimacro/__init__.py": 0o644,
            "share/apimacro/plugins/openweather/plugin.toml": 0o644, "share/apimacro/python/apimacro": 0o755,
            "share/bash-completion/completions/apimacro": 0o644, "share/zsh/site-functions/_apimacro": 0o644,
            "share/fish/vendor_completions.d/apimacro.fish": 0o644, "share/doc/apimacro/README.md": 0o644,
            "share/doc/apimacro/SECURITY.md": 0o644, "share/doc/apimacro/environment.txt": 0o644,
            "share/doc/apimacro/docs/guide/README.md": 0o644, "share/doc/apimacro/docs/guide/plugins.md": 0o644,
            "share/doc/apimacro/docs/guide": 0o755,
        ]
        for (path, mode) in modes {
            let attributes = try FileManager.default.attributesOfItem(atPath: prefix.appendingPathComponent(path).path)
            #expect((attributes[.posixPermissions] as? Int) == mode, "\(path)")
        }
        // Where an installed user looks for the settings: the same list as `apimacro help environment`.
        let settings = try await Binary.run(["help", "environment"], in: space.url)
        #expect(
            try String(contentsOf: share.appendingPathComponent("doc/apimacro/environment.txt"), encoding: .utf8)
                == settings.stdout)
        #expect(
            Self.files(under: share.appendingPathComponent("apimacro/python/apimacro"))
                == Self.files(under: Self.repository.appendingPathComponent("Sources/MacroRuntime/Python/apimacro")))
        // The guide's pages, where README.md's links find them (docs/guide/ beside it).
        #expect(
            Self.files(under: share.appendingPathComponent("doc/apimacro/docs/guide"))
                == Self.files(under: Self.repository.appendingPathComponent("docs/guide")))
        // The completions the binary wrote: bash registers one for apimacro; zsh's and fish's are theirs.
        let bash = try await Self.execute(
            "/bin/bash",
            [
                "-c", "source \"$1\" && complete -p apimacro", "bash",
                share.path + "/bash-completion/completions/apimacro",
            ],
            in: space)
        #expect(bash.stdout == "complete -o filenames -F _apimacro apimacro\n", "\(bash.stderr)")
        let zsh = try String(contentsOf: share.appendingPathComponent("zsh/site-functions/_apimacro"), encoding: .utf8)
        #expect(zsh.hasPrefix("#compdef apimacro"))
        let fish = try String(
            contentsOf: share.appendingPathComponent("fish/vendor_completions.d/apimacro.fish"), encoding: .utf8)
        #expect(fish.contains("complete -c 'apimacro'"))

        // Run directly and through a symlink in another folder (/usr/local/bin -> /opt/apimacro/bin).
        let link = space.url.appendingPathComponent("links/apimacro")
        try FileManager.default.createDirectory(at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: link, withDestinationURL: prefix.appendingPathComponent("bin/apimacro"))
        for executable in [prefix.appendingPathComponent("bin/apimacro"), link] {
            try await Self.expectReplays(["hello", "github-profile"], share: share, executable: executable, in: space)
            let plugins = try await Binary.run(["plugins", "list"], in: space.url, executable: executable)
            #expect(plugins.status == 0, "\(plugins.stderr)")
            let names = plugins.stdout.split(separator: "\n").dropFirst().compactMap { $0.split(separator: " ").first }
            #expect(names == ["foursquare", "hackernews", "openweather"], "\(plugins.stdout)")
        }
    }

    @Test("what swift-argument-parser's generate-manual reads to write the man page: the binary's help as JSON")
    func dumpHelp() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let result = try await Binary.run(["--experimental-dump-help"], in: space.url)
        #expect(result.status == 0, "\(result.stderr)")
        let info = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(info?["serializationVersion"] as? Int == 0)
        let command = info?["command"] as? [String: Any]
        #expect(command?["commandName"] as? String == "apimacro")
        let subcommands = (command?["subcommands"] as? [[String: Any]])?.compactMap { $0["commandName"] as? String }
        #expect(subcommands?.contains("run") == true, "\(result.stdout.prefix(500))")
    }

    @Test("README's set-up names every package scripts/setup-system installs")
    func setupPackagesNamed() throws {
        let setup = try String(contentsOfFile: Self.script("setup-system"), encoding: .utf8)
        let packages = setup.components(separatedBy: "missing+=(").dropFirst().compactMap {
            $0.split(separator: ")").first.map(String.init)
        }
        #expect(packages.count >= 10, "\(packages)")
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "### Set up and try it"))
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let section = readme[start.upperBound..<end.lowerBound]
        for package in packages {
            #expect(section.contains("`\(package)`"), "README's set-up does not name \(package)")
        }
    }
}
