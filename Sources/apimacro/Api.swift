import ArgumentParser
import MacroRuntime
import Platform
import WebAPI

/// `apimacro api [CLIENT] PATH_OR_URL [-X METHOD] [-f key=value] [-F key=value] [-H 'Name: v']
/// [--paginate] [--jq EXPR] [-i]`.
struct Api: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "One request through a client's base URL, credentials, cache and retries, as gh api does for GitHub.",
        discussion: """
            apimacro api github /users/octocat prints the answer: as the server sent it in a pipe, \
            pretty-printed and coloured on a terminal. CLIENT is a built-in client or a plugin; a path \
            with no client is GitHub's (apimacro api repos/cli/cli, as gh api); an absolute URL needs \
            none (a URL under a client's base URL goes through that client, any other with no \
            credentials). --hostname HOST sends GitHub's requests to HOST (github.com: api.github.com; \
            any other: GitHub Enterprise Server's https://HOST/api/v3, http for a loopback host).

            -f key=value adds a string field, -F key=value a typed one (true, false, null and \
            integers become JSON, @FILE is the file's text, @- stdin's): to the query string for GET, \
            else to a JSON body (key[]=v appends to an array, key[inner]=v nests). Fields make the \
            method POST unless -X says otherwise. --input FILE sends the file as the body as it is \
            ('-': stdin; JSON unless -H 'Content-Type: ...' says otherwise), and the fields then go to \
            the query string. With --paginate, fields make a POST too (as in gh): a warning says so once.

            --paginate follows the client's pages and prints one JSON array: the items of every page \
            (an object page's list where the client keeps it, else the page). --jq EXPR filters the \
            answer with jq (libjq 1.6): strings print as text, anything else as JSON; the filter runs \
            in a child process, stopped after 60 s (or --timeout) or 4 GiB. --template TEXT prints each \
            item (of a list answer, or of every page) as a line, with placeholders in the style of \
            Python's str.format, not gh's Go templates: '{name} {stargazers_count}', {owner.login}, \
            {topics[0]}, {{ and }} for braces; null prints as nothing, a list or object as JSON. \
            --silent prints no body. --cache 1h (also 30m, 2d, seconds) keeps and serves the answer that \
            long whatever its headers say, as gh api --cache; --cache refresh fetches anew and stores; \
            --cache only-if-cached answers from the cache or fails, sending nothing.

            --dry-run prints the request it would send (method, URL, headers, body up to 4 KiB; \
            credentials redacted) and sends nothing. --curl prints an equivalent curl command line \
            instead: each secret is a shell variable naming where it comes from \
            ("Authorization: Bearer $APIMACRO_GITHUB_TOKEN"), never its value; a stored login is \
            $TOKEN, with a comment line saying where it is kept. -vv prints every request and \
            response in full on stderr as they go (redacted the same way).

            Exit code: 0, or 1 when the answer is not 2xx (it is printed, then the error), or a GraphQL \
            answer holds errors (printed, then the first message), or the filter failed; 2 for a usage error (a --jq filter that does not compile among them).
            """)

    @Argument(help: ArgumentHelp("The client, then the path (or just an absolute URL).", valueName: "client"))
    var words: [String]

    @Option(
        name: [.customShort("X"), .customLong("method")], help: "The HTTP method (default: GET, POST with fields).")
    var method: String?

    @Option(name: [.customShort("f"), .customLong("raw-field")], help: "A string field, key=value.")
    var rawFields: [String] = []

    @Option(
        name: [.customShort("F"), .customLong("field")],
        help: "A typed field, key=value: true, false, null, integers and @FILE are read.")
    var fields: [String] = []

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value'.")
    var headers: [String] = []

    @Flag(help: "Fetch every page and print one JSON array of their items.")
    var paginate = false

    @Option(
        name: [.customShort("q"), .customLong("jq")],
        help: ArgumentHelp("Filter the answer with jq.", valueName: "expr"))
    var jq: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print each answer's status line and headers.")
    var include = false

    @Option(
        help: ArgumentHelp("Send this file as the request body ('-': standard input).", valueName: "file"),
        completion: .file())
    var input: String?

    @Flag(help: "Do not print the answer's body.")
    var silent = false

    @Option(
        help: ArgumentHelp(
            "Keep and serve the answer this long whatever its headers say (1h, 30m, 2d, seconds); "
                + "also refresh or only-if-cached.", valueName: "rule"))
    var cache: String?

    @Option(
        name: [.customShort("t"), .customLong("template")],
        help: ArgumentHelp(
            "Print each item with placeholders in Python format style: '{name} {id}'.", valueName: "text"))
    var template: String?

    @Flag(name: .customLong("dry-run"), help: "Print the request it would send (secrets redacted) and send nothing.")
    var dryRun = false

    @Flag(help: "Print an equivalent curl command line, secrets as $VARIABLE references, and send nothing.")
    var curl = false

    @Option(help: ArgumentHelp("GitHub's host for the request (default: github.com).", valueName: "host"))
    var hostname: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Stop after this many seconds (exit 1), the --jq filter included.", valueName: "seconds"))
    var timeout: Double?

    @OptionGroup var exchange: ExchangeOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Colour JSON, errors and warnings: auto (on a terminal, unless NO_COLOR is set), always or never.",
            valueName: "when"))
    var color: String?

    func validate() throws {
        guard (1...2).contains(words.count) else {
            throw ValidationError(
                "give a path or URL, with the client first for a path (apimacro api github /users/octocat)")
        }
    }

    func run() async throws {
        var process = ProcessInfo.processInfo.environment
        if let hostname {
            if words.count == 2, words[0] != "github" {
                throw ValidationError("--hostname is GitHub's host; it does not go with the client '\(words[0])'")
            }
            process["APIMACRO_GITHUB_URL"] = try ApiCall.gitHubBaseURL(hostname: hostname)
        }
        let settings = try exchange.settings(timeout: timeout, color: color, process: process)
        let target = words[words.count - 1]
        // A path with no client is GitHub's, as `gh api repos/x/y`; a URL needs no client.
        let client = words.count == 2 ? words[0] : (ApiCall.isURL(target) ? nil : "github")
        var call = ApiCall(client: client, target: target)
        call.method = method
        call.rawFields = rawFields
        call.typedFields = fields
        call.headers = headers
        call.paginate = paginate
        call.jq = jq
        call.include = include
        call.input = input
        call.silent = silent
        call.template = template
        call.dryRun = dryRun
        call.curl = curl
        if let cache {
            guard let choice = CacheChoice.parse(cache) else {
                throw ValidationError(
                    "--cache takes a duration (1h, 30m, 2d, or seconds), refresh or only-if-cached, not '\(cache)'")
            }
            call.cache = choice
        }
        try await call.run(settings: settings)
    }
}
