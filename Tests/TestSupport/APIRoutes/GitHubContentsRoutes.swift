import Foundation

/// `GET /repos/octo-org/contents-demo/contents[/{path}]` in the documented shapes of "Get
/// repository content" (https://docs.github.com/rest/repos/contents#get-repository-content):
/// a directory is an array of entries (`type`, `size`, `name`, `path`, `sha`, `url`,
/// `git_url`, `html_url`, `download_url`, `_links`), a file an object with its `content` in
/// base64 (`encoding`), a submodule an object of `type` "submodule" with `submodule_git_url`.
///
/// The root holds `README.md`, the directory `docs` (holding `guide.md`) and the submodule
/// `vendor/lib`'s parent `vendor`. In a directory listing a submodule's `type` is "file" under
/// 2022-11-28 ("for backwards compatibility", as the documentation says) and "submodule" under
/// 2026-03-10 (its breaking changes); asked for itself it is a submodule in both.
struct GitHubContentsRoutes: RouteHandler {
    static let repository = "/repos/octo-org/contents-demo"
    static let readme = "# contents-demo\n\nA repository with a submodule.\n"

    /// What sits at each path: a file's text, a directory's entries, or a submodule's URL.
    enum Node {
        case file(String)
        case directory([String])
        case submodule(String)
    }

    static let tree: [String: Node] = [
        "": .directory(["README.md", "docs", "vendor"]),
        "README.md": .file(readme),
        "docs": .directory(["docs/guide.md"]),
        "docs/guide.md": .file("# Guide\n"),
        "vendor": .directory(["vendor/lib"]),
        "vendor/lib": .submodule("https://github.com/octo-org/lib.git"),
    ]

    func respond(to request: RouteRequest) -> Response? {
        let prefix = Self.repository + "/contents"
        let path = request.recorded.path
        guard request.method == "GET" || request.method == "HEAD", path == prefix || path.hasPrefix(prefix + "/")
        else { return nil }
        var inner = String(path.dropFirst(prefix.count))
        while inner.hasPrefix("/") { inner.removeFirst() }
        while inner.hasSuffix("/") { inner.removeLast() }
        inner = inner.removingPercentEncoding ?? inner
        guard let node = Self.tree[inner] else {
            return GitHubUserRoutes.notFound("/repos/contents#get-repository-content")
        }
        let origin = request.origin
        switch node {
        case .directory(let children):
            let current = GitHubVersions.isCurrent(request)
            return .json(.array(children.map { Self.entry($0, origin: origin, listing: true, current: current) }))
        case .file, .submodule:
            return .json(Self.entry(inner, origin: origin, listing: false, current: true))
        }
    }

    /// The object for `path`; in a directory `listing`, a submodule's `type` depends on the
    /// version (`current`: 2026-03-10).
    static func entry(_ path: String, origin: String, listing: Bool, current: Bool) -> JSON {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let sha = String(String(path.utf8.map { String(format: "%02x", $0) }.joined()).prefix(40))
        let url = "\(origin)\(repository)/contents/\(path)?ref=main"
        let html = "https://github.com/octo-org/contents-demo/blob/main/\(path)"
        var members: [(String, JSON)] = []
        var gitURL = "\(origin)\(repository)/git/blobs/\(sha)"
        switch tree[path] {
        case .file(let text)?:
            members = [("type", .string("file")), ("size", .int(text.utf8.count))]
            if !listing {
                members += [
                    ("encoding", .string("base64")), ("content", .string(Data(text.utf8).base64EncodedString())),
                ]
            }
            members.append(
                ("download_url", .string("https://raw.githubusercontent.com/octo-org/contents-demo/main/\(path)")))
        case .directory?:
            gitURL = "\(origin)\(repository)/git/trees/\(sha)"
            members = [("type", .string("dir")), ("size", .int(0)), ("download_url", .null)]
        case .submodule(let remote)?:
            gitURL = "\(origin)/repos/octo-org/lib/git/trees/\(sha)"
            members = [
                ("type", .string(listing && !current ? "file" : "submodule")), ("size", .int(0)),
                ("download_url", .null),
            ]
            if !listing { members.append(("submodule_git_url", .string(remote))) }
        case nil:
            break
        }
        return .object(
            members + [
                ("name", .string(name)), ("path", .string(path)), ("sha", .string(sha)), ("url", .string(url)),
                ("git_url", .string(gitURL)), ("html_url", .string(html)),
                (
                    "_links",
                    .object([("self", .string(url)), ("git", .string(gitURL)), ("html", .string(html))])
                ),
            ])
    }
}
