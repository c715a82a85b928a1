public import Foundation
import Synchronization

/// A GitHub App as GitHub serves it (`TestServer.setGitHubApp`): the endpoints an App reaches
/// with its JWT, `GET /app`, `GET /app/installations`, `GET /repos/{o}/{r}/installation`,
/// `/orgs/{org}/installation`, `/users/{u}/installation` and
/// `POST /app/installations/{id}/access_tokens`, and `GET /installation/repositories` with an
/// installation token.
///
/// Every JWT is checked as GitHub does: its RS256 signature with the public key of the key
/// pair the test made (verified by `openssl dgst -sha256 -verify`, not by the code under test's
/// library), `iss` the App's ID, `iat` not in the future, `exp` in the future and at most 10
/// minutes ahead; a bad one gets GitHub's 401 and its message. Installation tokens expire by
/// the server's clock (each lifetime in `GitHubAppSetup.tokenLifetimes`); a request with an
/// expired one gets 401 "Bad credentials".
///
/// The answers have the shapes of GitHub's, as PyGithub recorded them
/// (tests/ReplayData/GithubIntegration.testGetRepoInstallation.txt, .testGetOrgInstallation.txt,
/// .testGetUserInstallation.txt, .testGetAccessToken.txt, Installation.testGetRepos.txt), and of
/// GitHub's REST docs where no recording exists (`GET /app/installations`, `GET /app`:
/// https://docs.github.com/rest/apps/apps).
final class GitHubAppRoutes: RouteHandler, Sendable {
    private struct State {
        var setup: GitHubAppSetup?
        var report = GitHubAppReport()
        /// Issued tokens: installation and expiry (server epoch seconds).
        var tokens: [String: (installation: Int, expiresAt: Int)] = [:]
        /// JWTs whose signature openssl checked: whether it verified.
        var verified: [String: Bool] = [:]
    }
    private let state = Mutex(State())

    func configure(_ setup: GitHubAppSetup?) {
        state.withLock { $0 = State(setup: setup) }
    }

    var report: GitHubAppReport { state.withLock { $0.report } }

    func respond(to request: RouteRequest) -> Response? {
        guard let setup = state.withLock({ $0.setup }) else { return nil }
        let bearer = request.recorded.header("authorization").flatMap { value -> String? in
            value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
        }
        let now = ServerCore.now()
        // An installation token this server issued: counted, and refused once expired.
        if let bearer, let issued = state.withLock({ $0.tokens[bearer] }) {
            let expired = now >= issued.expiresAt
            state.withLock { state in
                state.report.uses[bearer, default: 0] += 1
                if expired { state.report.expiredUses += 1 }
            }
            if expired {
                return .json(
                    .object([
                        ("message", .string("Bad credentials")),
                        ("documentation_url", .string("https://docs.github.com/rest")), ("status", .string("401")),
                    ]), status: 401)
            }
            if request.match("GET", "/installation/repositories") != nil {
                return repositories(of: issued.installation, setup: setup, origin: request.origin)
            }
            return nil
        }
        guard let route = appRoute(request) else { return nil }
        guard let bearer else { return Self.unauthorized("A JSON web token could not be decoded") }
        if let refusal = check(jwt: bearer, setup: setup, now: now) {
            state.withLock { $0.report.refusedJWTs.append(refusal) }
            return Self.unauthorized(refusal)
        }
        return route(setup, now)
    }

    // MARK: the App's endpoints

    private func appRoute(_ request: RouteRequest) -> ((GitHubAppSetup, Int) -> Response)? {
        let origin = request.origin
        if request.match("GET", "/app") != nil {
            return { setup, _ in .json(Self.app(setup, origin: origin)) }
        }
        if request.match("GET", "/app/installations") != nil {
            return { setup, _ in .json(.array(setup.installations.map { Self.installation($0, setup, origin: origin) }))
            }
        }
        for (pattern, kind) in [
            ("/repos/{owner}/{repo}/installation", "repos"), ("/orgs/{owner}/installation", "orgs"),
            ("/users/{owner}/installation", "users"),
        ] {
            guard let captures = request.match("GET", pattern), let owner = captures["owner"] else { continue }
            return { setup, _ in
                guard let found = setup.installations.first(where: { $0.account.lowercased() == owner.lowercased() })
                else {
                    return GitHubUserRoutes.notFound(
                        "/apps/apps#get-a-\(kind == "repos" ? "repository" : kind == "orgs" ? "organization" : "user")-installation-for-the-authenticated-app"
                    )
                }
                return .json(Self.installation(found, setup, origin: origin))
            }
        }
        if let captures = request.match("POST", "/app/installations/{id}/access_tokens"),
            let id = captures["id"].flatMap({ Int($0) })
        {
            return { [self] setup, now in mint(installation: id, setup: setup, now: now) }
        }
        return nil
    }

    private func mint(installation: Int, setup: GitHubAppSetup, now: Int) -> Response {
        guard setup.installations.contains(where: { $0.id == installation }) else {
            return GitHubUserRoutes.notFound("/apps/apps#create-an-installation-access-token-for-an-app")
        }
        let (token, expiresAt) = state.withLock { state -> (String, Int) in
            let number = state.report.tokens.count
            let lifetimes = setup.tokenLifetimes.isEmpty ? [3600] : setup.tokenLifetimes
            let lifetime = lifetimes[min(number, lifetimes.count - 1)]
            let token = setup.chosenToken ?? Self.token(number: number)
            state.tokens[token] = (installation, now + lifetime)
            state.report.tokens.append(
                GitHubAppReport.IssuedToken(token: token, installation: installation, expiresAt: now + lifetime))
            return (token, now + lifetime)
        }
        return .json(
            .object([
                ("token", .string(token)), ("expires_at", .string(Self.iso8601(expiresAt))),
                ("permissions", .object([("issues", .string("write")), ("metadata", .string("read"))])),
                ("repository_selection", .string("selected")),
            ]), status: 201)
    }

    /// Token `number`: GitHub's classic `ghs_` + 36, then a long one of another alphabet (GitHub
    /// announced longer installation tokens; any length and format must work).
    static func token(number: Int) -> String {
        let classic = "ghs_" + String(String(repeating: "AppToken\(number)x", count: 8).prefix(36))
        guard number % 2 == 1 else { return classic }
        return "ghs_"
            + (0..<6).map { "v2.\(number).segment-\($0)_" + String(repeating: "Zq9", count: 16) }.joined(separator: ".")
    }

    private func repositories(of installation: Int, setup: GitHubAppSetup, origin: String) -> Response {
        let account = setup.installations.first { $0.id == installation }?.account ?? "unknown"
        let names = ["sandbox", "python"]
        return .json(
            .object([
                ("total_count", .int(names.count)), ("repository_selection", .string("selected")),
                (
                    "repositories",
                    .array(
                        names.enumerated().map { index, name in
                            .object([
                                ("id", .int(418_546_277 + index)), ("name", .string(name)),
                                ("full_name", .string("\(account)/\(name)")), ("private", .bool(index == 0)),
                                ("owner", .object([("login", .string(account))])),
                                ("url", .string("\(origin)/repos/\(account)/\(name)")),
                                // Deprecated members 2026-03-10 removed (`GitHubVersions`).
                                ("has_downloads", .bool(true)), ("use_squash_pr_title_as_default", .bool(false)),
                            ])
                        })
                ),
            ]))
    }

    static func app(_ setup: GitHubAppSetup, origin: String) -> JSON {
        .object([
            ("id", .int(Int(setup.appID) ?? 243_473)), ("slug", .string(setup.slug)),
            ("client_id", .string(Int(setup.appID) == nil ? setup.appID : "Iv1.8a61f9b3a7aba766")),
            ("owner", .object([("login", .string(setup.installations.first?.account ?? "octo-org"))])),
            ("name", .string(setup.slug)), ("html_url", .string("https://github.com/apps/\(setup.slug)")),
            ("permissions", .object([("issues", .string("write")), ("metadata", .string("read"))])),
        ])
    }

    static func installation(_ installation: GitHubAppSetup.Installation, _ setup: GitHubAppSetup, origin: String)
        -> JSON
    {
        .object([
            ("id", .int(installation.id)),
            (
                "account",
                .object([
                    ("login", .string(installation.account)), ("id", .int(29_196_434 + installation.id % 1000)),
                    ("url", .string("\(origin)/users/\(installation.account)")), ("type", .string(installation.type)),
                    ("site_admin", .bool(false)),
                ])
            ),
            ("repository_selection", .string("selected")),
            ("access_tokens_url", .string("\(origin)/app/installations/\(installation.id)/access_tokens")),
            ("repositories_url", .string("\(origin)/installation/repositories")),
            ("app_id", .int(Int(setup.appID) ?? 243_473)), ("app_slug", .string(setup.slug)),
            ("target_type", .string(installation.type)),
            ("permissions", .object([("issues", .string("write")), ("metadata", .string("read"))])),
            ("events", .array([])), ("created_at", .string("2022-10-26T11:13:03.000Z")),
            ("suspended_by", .null), ("suspended_at", .null),
        ])
    }

    // MARK: the JWT

    static func unauthorized(_ message: String) -> Response {
        .json(
            .object([
                ("message", .string(message)),
                (
                    "documentation_url",
                    .string("https://docs.github.com/rest/apps/apps#get-the-authenticated-app")
                ), ("status", .string("401")),
            ]), status: 401)
    }

    /// Why GitHub would refuse `jwt`, or nil when it would take it (and then it is in the report).
    private func check(jwt: String, setup: GitHubAppSetup, now: Int) -> String? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let header = Self.json(parts[0]), let claims = Self.json(parts[1]),
            header["alg"]?.stringValue == "RS256"
        else { return "A JSON web token could not be decoded" }
        let known = state.withLock { $0.verified[jwt] }
        let valid = known ?? Self.verify(signingInput: parts[0] + "." + parts[1], signature: parts[2], setup: setup)
        state.withLock { $0.verified[jwt] = valid }
        guard valid else { return "A JSON web token could not be decoded" }
        guard case .number(let iatText) = claims["iat"], let iat = Int(iatText) else {
            return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
        }
        guard case .number(let expText) = claims["exp"], let exp = Int(expText), exp > now else {
            return
                "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
        }
        guard exp - now <= 600 else { return "'Expiration time' claim ('exp') is too far in the future" }
        guard iat <= now else {
            return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
        }
        let issuer: String
        switch claims["iss"] {
        case .number(let text)?: issuer = text
        case .string(let text)?: issuer = text
        default: return "Integration not found"
        }
        guard issuer == setup.appID else { return "Integration not found" }
        state.withLock {
            $0.report.jwts.append(
                GitHubAppReport.JWTSeen(jwt: jwt, issuedAt: iat, expiresAt: exp, issuer: issuer, serverNow: now))
        }
        return nil
    }

    /// A base64url part as JSON.
    static func json(_ part: String) -> JSON? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        return try? JSON(parsing: Array(data))
    }

    /// Whether openssl finds `signature` (base64url) to be RS256 of `signingInput` under the App's public key.
    static func verify(signingInput: String, signature: String, setup: GitHubAppSetup) -> Bool {
        var text = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let signatureBytes = Data(base64Encoded: text) else { return false }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(signingInput.utf8).write(to: folder.appendingPathComponent("input"))
            try signatureBytes.write(to: folder.appendingPathComponent("signature"))
            let process = try Spawned(
                "/usr/bin/env",
                [
                    "openssl", "dgst", "-sha256", "-verify", setup.publicKeyPath, "-signature",
                    folder.appendingPathComponent("signature").path, folder.appendingPathComponent("input").path,
                ], environment: ProcessInfo.processInfo.environment)
            let exit = process.waitUntilExit()
            return exit.status == 0 && !exit.signalled
        } catch {
            return false
        }
    }

    static func iso8601(_ epoch: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(epoch)))
    }
}

/// The GitHub App a test server plays (`TestServer.setGitHubApp`).
public struct GitHubAppSetup: Sendable {
    /// One installation of the App.
    public struct Installation: Sendable {
        public var id: Int
        /// The account's login (a user or an organisation).
        public var account: String
        /// `User` or `Organization`.
        public var type: String

        public init(id: Int, account: String, type: String = "Organization") {
            self.id = id
            self.account = account
            self.type = type
        }
    }

    /// What the JWT's `iss` must be: the numeric ID or the client ID, as text.
    public var appID: String
    /// The public key's PEM file (`openssl rsa -pubout`), which verifies the JWTs.
    public var publicKeyPath: String
    public var installations: [Installation]
    /// Each token's lifetime in seconds, in the order they are issued; the last one repeats.
    public var tokenLifetimes: [Int]
    public var slug: String
    /// Hostile: the token every installation token request answers with (as short as `http`,
    /// or holding URL syntax), instead of a token of GitHub's shape.
    public var chosenToken: String?

    public init(
        appID: String, publicKeyPath: String, installations: [Installation], tokenLifetimes: [Int] = [3600],
        slug: String = "apimacro-test-app"
    ) {
        self.appID = appID
        self.publicKeyPath = publicKeyPath
        self.installations = installations
        self.tokenLifetimes = tokenLifetimes
        self.slug = slug
    }
}

/// What the App's server side saw.
public struct GitHubAppReport: Sendable {
    /// A JWT that was accepted, with its claims and the server's clock then.
    public struct JWTSeen: Sendable {
        public var jwt: String
        public var issuedAt: Int
        public var expiresAt: Int
        public var issuer: String
        public var serverNow: Int
    }
    /// A token issued.
    public struct IssuedToken: Sendable {
        public var token: String
        public var installation: Int
        public var expiresAt: Int
    }
    public var jwts: [JWTSeen] = []
    /// Why each refused JWT was refused (GitHub's messages).
    public var refusedJWTs: [String] = []
    public var tokens: [IssuedToken] = []
    /// Requests that carried each issued token.
    public var uses: [String: Int] = [:]
    /// Requests that carried a token after it expired.
    public var expiredUses = 0
}

/// A key pair made for one test by `openssl genrsa`, in a folder of its own (mode 0600 files).
public struct TestRSAKeyPair: Sendable {
    /// The private key (PEM) and the public key (PEM, `openssl rsa -pubout`).
    public let privateKeyPath: String
    public let publicKeyPath: String

    /// Makes a pair of `bits` in `folder`; `traditional` writes PKCS #1 (`BEGIN RSA PRIVATE KEY`,
    /// as GitHub hands out), else PKCS #8.
    public init(in folder: URL, name: String = "app", bits: Int = 2048, traditional: Bool = true) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let privateKey = folder.appendingPathComponent("\(name).pem").path
        let publicKey = folder.appendingPathComponent("\(name).pub.pem").path
        try Self.openssl(["genrsa", "-out", privateKey] + (traditional ? ["-traditional"] : []) + [String(bits)])
        try Self.openssl(["rsa", "-in", privateKey, "-pubout", "-out", publicKey])
        _ = chmod(privateKey, 0o600)
        privateKeyPath = privateKey
        publicKeyPath = publicKey
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = try Spawned(
            "/usr/bin/env", ["openssl"] + arguments, environment: ProcessInfo.processInfo.environment)
        let exit = process.waitUntilExit()
        guard exit.status == 0, !exit.signalled else {
            throw ProcessFailure(
                "openssl \(arguments.first ?? "") failed (exit \(exit.status)); install it with scripts/setup-system")
        }
    }
}

extension TestServer {
    /// Plays the GitHub App `setup` from now on (nil: none); its report starts empty.
    public func setGitHubApp(_ setup: GitHubAppSetup?) { core.gitHubApp?.configure(setup) }

    /// What the App's endpoints saw.
    public var gitHubAppReport: GitHubAppReport { core.gitHubApp?.report ?? GitHubAppReport() }
}
