import Platform

/// The man page's sections that swift-argument-parser's `generate-manual` does not write:
/// ENVIRONMENT (from `SettingsTable`, as `apimacro help environment`), FILES and EXAMPLES, in
/// mdoc.
///
/// `scripts/install` asks the installed binary for them (`apimacro __apimacro_man`) and puts
/// them before the generated page's EXIT STATUS.
public enum ManualSections {
    /// The hidden first argument that prints the sections (caught first thing in `main`).
    public static let argument = "__apimacro_man"

    /// The three sections, in mdoc.
    public static var mdoc: String {
        (environment + files + examples).joined(separator: "\n") + "\n"
    }

    static var environment: [String] {
        var lines = [
            ".Sh ENVIRONMENT",
            text(
                "Each setting may be set in the environment or, by its key, in $APIMACRO_HOME/config.toml; "
                    + "a flag wins over the environment, the environment over config.toml, config.toml over "
                    + "the default. apimacro help environment prints the same list."),
            ".Bl -tag -width Ds",
        ]
        for entry in SettingsTable.all {
            lines.append(".It Ev \(text(entry.variable))")
            var facts: [String] = []
            if let key = entry.keyText { facts.append("config.toml: \(key)") }
            facts.append("default: \(entry.defaultText ?? "none")")
            lines.append(text(entry.summary + "; " + facts.joined(separator: "; ") + "."))
        }
        lines += [
            ".El",
            text(
                "Also read: GITHUB_TOKEN (after APIMACRO_GITHUB_TOKEN), gh's GH_TOKEN and hosts.yml, "
                    + "XDG_CONFIG_HOME, XDG_CACHE_HOME, NO_COLOR, SSL_CERT_FILE and the proxy variables."),
        ]
        return lines
    }

    static var files: [String] {
        let entries: [(String, String)] = [
            ("$APIMACRO_HOME", "apimacro's folder: $XDG_CONFIG_HOME/apimacro, else ~/.config/apimacro."),
            ("$APIMACRO_HOME/config.toml", "settings, by the keys under ENVIRONMENT."),
            (
                "$APIMACRO_HOME/credentials.json",
                "the tokens apimacro login stored (mode 0600; refused when others can read it)."
            ),
            ("$APIMACRO_HOME/cache.key", "the key that seals the HTTP cache's entries."),
            ("$APIMACRO_HOME/history", "the REPL's history (mode 0600)."),
            ("$APIMACRO_HOME/macros/", "macros run by name, after ./macros/."),
            ("$APIMACRO_HOME/plugins/", "plugin folders, each with its plugin.toml (also APIMACRO_PLUGINS)."),
            (
                "$XDG_CACHE_HOME/apimacro/cache.sqlite",
                "the HTTP cache (~/.cache/apimacro without XDG_CACHE_HOME); apimacro cache clear empties it."
            ),
            (
                "PREFIX/share/apimacro/",
                "the bundled Python package, the shipped plugins and the examples with their cassettes."
            ),
            ("PREFIX/share/doc/apimacro/", "README.md and docs/guide/, the user's guide, and SECURITY.md."),
        ]
        var lines = [".Sh FILES", ".Bl -tag -width Ds"]
        for (path, what) in entries {
            lines += [".It Pa \(text(path))", text(what)]
        }
        lines.append(".El")
        return lines
    }

    static var examples: [String] {
        let entries: [(String, String)] = [
            (
                "Run a shipped example with no network, from its recording:",
                "apimacro run --replay PREFIX/share/apimacro/examples/cassettes/github-profile.har "
                    + "PREFIX/share/apimacro/examples/github-profile.py --login octocat"
            ),
            ("Run the offline example:", "apimacro run PREFIX/share/apimacro/examples/hello.py --name Ada --times 2"),
            ("One request, as gh api does, filtered with jq:", "apimacro api repos/cli/cli --jq .stargazers_count"),
            (
                "Every page of a list, one line per item:",
                "apimacro api users/octocat/repos --paginate --template '{name} {stargazers_count}'"
            ),
            (
                "Log in to Instagram, and run a macro only when that worked:",
                "apimacro login instagram && apimacro run instagram-top-posts.py"
            ),
            (
                "Many macros, four at a time, with a report for CI:",
                "apimacro batch -j 4 --junit reports/batch.xml a.py b.py"
            ),
            ("Which clients have credentials, checked with each service:", "apimacro auth status --check"),
            ("The settings and their defaults:", "apimacro help environment"),
        ]
        var lines = [".Sh EXAMPLES"]
        for (what, command) in entries {
            lines += [".Pp", text(what), ".Dl \(text(command))"]
        }
        return lines
    }

    /// `line` safe as mdoc text: backslashes escaped, a leading `.` or `'` made plain.
    static func text(_ line: String) -> String {
        let escaped = line.replacing("\\", with: "\\e")
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }
}
