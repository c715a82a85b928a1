import Clients
public import Platform
import WebAPI

/// `apimacro stubs`: where the type stubs of `apimacro` are, and `--install`, which copies them
/// into the active virtualenv as the stub-only package `apimacro-stubs` (PEP 561), where mypy,
/// pyright and the editors built on them look.
public struct StubInstaller {
    /// The environment (`VIRTUAL_ENV`).
    let environment: [String: String]

    /// An installer reading `VIRTUAL_ENV` from `environment`.
    public init(environment: [String: String]) {
        self.environment = environment
    }

    /// The folder that holds `apimacro/__init__.pyi` (the bundled package, shipped with the binary).
    ///
    /// It is what a type checker's search path takes (mypy's `mypy_path`, pyright's `stubPath`).
    /// - Throws: `MacroError` when the bundled package or its stubs are missing.
    public static func folder() throws -> URL {
        guard let folder = PythonPackage.locate() else {
            throw MacroError("the bundled Python package was not found; reinstall apimacro with its share/ folder")
        }
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("apimacro/__init__.pyi").path)
        else { throw MacroError("\(folder.path)/apimacro has no __init__.pyi; reinstall apimacro") }
        return folder
    }

    /// How to use the stubs without a virtualenv: the folder, and the setting of each checker.
    public static func howToAdd(_ folder: URL) -> String {
        """
        apimacro's type stubs are in \(folder.path)/apimacro (apimacro \(MacroHostInfo.version)).
        Without a virtualenv, give your type checker that folder:
          mypy:    MYPYPATH=\(folder.path) mypy --strict my_macro.py   (or mypy_path in mypy.ini)
          pyright: "stubPath": "\(folder.path)" in pyrightconfig.json (VS Code: python.analysis.stubPath)
        In an active virtualenv, `apimacro stubs --install` installs them as the package apimacro-stubs.
        """
    }

    /// The GitHub REST API versions whose answer shapes the stubs hold (`_github_<version>.pyi`;
    /// `_github_common.pyi` holds the shapes they share and is no version).
    public static func githubAPIVersions(in folder: URL) -> [String] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("apimacro").path)) ?? []
        return names.filter {
            $0.hasPrefix("_github_") && $0.hasSuffix(".pyi")
                && $0.dropFirst("_github_".count).dropLast(".pyi".count).allSatisfy { $0.isNumber || $0 == "_" }
        }
        .map {
            String($0.dropFirst("_github_".count).dropLast(".pyi".count)).replacing("_", with: "-")
        }
        .sorted()
    }

    /// `github_types.pyi` for `version`: the shapes of that REST API version.
    static func githubTypes(_ shipped: String, version: String) -> String {
        shipped.replacing(
            "from apimacro._github_2022_11_28 import *",
            with: "from apimacro._github_\(version.replacing("-", with: "_")) import *"
        ).replacing(
            "GitHub REST API 2022-11-28 (the default)", with: "GitHub REST API \(version)")
    }

    /// Copies the stubs into the virtualenv's site-packages as the package `apimacro-stubs`
    /// (`__init__.pyi`, `github_types.pyi` for `githubAPIVersion` and the shapes it imports), with
    /// a `.dist-info` of apimacro's version (so `pip list` shows it and `pip uninstall
    /// apimacro-stubs` removes it), replacing an earlier install; returns the package's folder.
    ///
    /// - Throws: `MacroError` when no virtualenv is active, it has no site-packages, the API
    ///   version has no shapes, or the files cannot be written.
    public func install(githubAPIVersion: String? = nil) throws -> URL {
        let folder = try Self.folder()
        let versions = Self.githubAPIVersions(in: folder)
        let version = githubAPIVersion ?? GitHubConfiguration.defaultAPIVersion
        guard versions.contains(version) else {
            throw MacroError(
                "the stubs have GitHub's answer shapes for the REST API versions \(versions.joined(separator: ", ")), "
                    + "not \(version): give one of them with --github-api-version")
        }
        guard let venv = environment["VIRTUAL_ENV"], !venv.isEmpty else {
            throw MacroError(
                "no virtualenv is active (VIRTUAL_ENV is not set): activate the one your editor uses and run "
                    + "`apimacro stubs --install` again, or give your type checker \(folder.path) "
                    + "(see `apimacro stubs`)")
        }
        let sitePackages = try Self.sitePackages(of: URL(fileURLWithPath: venv))
        let release = MacroHostInfo.version
        let fileManager = FileManager.default
        let package = sitePackages.appendingPathComponent("apimacro-stubs")
        let distInfo = sitePackages.appendingPathComponent("apimacro_stubs-\(release).dist-info")
        do {
            let earlier = try fileManager.contentsOfDirectory(atPath: sitePackages.path).filter {
                $0.hasPrefix("apimacro_stubs-") && $0.hasSuffix(".dist-info")
            }
            for name in earlier + ["apimacro-stubs"] {
                try? fileManager.removeItem(at: sitePackages.appendingPathComponent(name))
            }
            try fileManager.createDirectory(at: package, withIntermediateDirectories: true)
            try fileManager.createDirectory(at: distInfo, withIntermediateDirectories: true)
            let stubs = try fileManager.contentsOfDirectory(atPath: folder.appendingPathComponent("apimacro").path)
                .filter { $0.hasSuffix(".pyi") }.sorted()
            for name in stubs {
                var stub = try Data(contentsOf: folder.appendingPathComponent("apimacro/\(name)"))
                if name == "github_types.pyi" {
                    stub = Data(Self.githubTypes(String(decoding: stub, as: UTF8.self), version: version).utf8)
                }
                try stub.write(to: package.appendingPathComponent(name))
            }
            let files: [(String, String)] = [
                (
                    "METADATA",
                    """
                    Metadata-Version: 2.1
                    Name: apimacro-stubs
                    Version: \(release)
                    Summary: Type stubs of the apimacro module (apimacro \(release)), installed by `apimacro stubs --install`

                    """
                ),
                ("INSTALLER", "apimacro\n"),
                ("top_level.txt", "apimacro-stubs\n"),
            ]
            for (name, text) in files {
                try Data(text.utf8).write(to: distInfo.appendingPathComponent(name))
            }
            let record =
                (stubs.map { "apimacro-stubs/\($0)" } + files.map { "\(distInfo.lastPathComponent)/\($0.0)" }).map {
                    "\($0),,"
                } + ["\(distInfo.lastPathComponent)/RECORD,,"]
            try Data((record.joined(separator: "\n") + "\n").utf8).write(
                to: distInfo.appendingPathComponent("RECORD"))
        } catch {
            throw MacroError("cannot install the stubs into \(sitePackages.path): \(SystemErrorText.reason(error))")
        }
        return package
    }

    /// `lib/pythonX.Y/site-packages` of a virtualenv (the embedded Python's version first when
    /// it has several).
    static func sitePackages(of venv: URL) throws -> URL {
        let lib = venv.appendingPathComponent("lib")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? [])
            .filter { $0.hasPrefix("python") }.sorted()
        let candidates = versions.map { lib.appendingPathComponent($0).appendingPathComponent("site-packages") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
        let embedded = "python\(MacroHostInfo.pythonMinor)"
        guard
            let chosen = candidates.first(where: { $0.deletingLastPathComponent().lastPathComponent == embedded })
                ?? candidates.first
        else {
            throw MacroError("\(venv.path) (VIRTUAL_ENV) has no lib/python*/site-packages: is it a virtualenv?")
        }
        return chosen
    }
}
