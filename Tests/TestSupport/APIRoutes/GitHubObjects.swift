import Foundation

/// GitHub objects built from the recorded repository (`github/octokit-get-repository.json`):
/// its `owner` is the template of a simple user, the repository itself the template of a repo.
enum GitHubObjects {
    static let fixtureFile = "github/octokit-get-repository.json"
    static let fixtureOwner = "octokit-fixture-org"
    static let fixtureRepository = "octokit-fixture-org/hello-world"
    static let languages: [String?] = [nil, "Swift", "Python", "Go", "JavaScript", "Ruby"]

    /// A "simple user" (the `owner` shape) for `login`, its API URLs under `origin`.
    static func simpleUser(login: String, id: Int, origin: String) throws -> JSON {
        guard let template = try FixtureStore.firstResponse(fixtureFile)["owner"] else {
            throw FixtureError(path: fixtureFile, reason: "has no owner object")
        }
        let encoded = URLCoding.percentEncode(login)
        return
            template
            .mapStrings { text in
                text.replacing(GitHubFixtureRoutes.apiOrigin, with: origin)
                    .replacing("/users/\(fixtureOwner)", with: "/users/\(encoded)")
                    .replacing("https://github.com/\(fixtureOwner)", with: "https://github.com/\(encoded)")
            }
            .setting("login", .string(login))
            .setting("id", .int(id))
            .setting("node_id", .string(nodeID("04:User\(id)")))
            .setting("avatar_url", .string("https://avatars.githubusercontent.com/u/\(id)?v=4"))
            .setting("type", .string("User"))
            .setting("site_admin", .bool(false))
    }

    /// The full user object `GET /users/{login}` returns.
    static func fullUser(_ profile: GitHubProfile, origin: String) throws -> JSON {
        let simple = try simpleUser(login: profile.login, id: profile.id, origin: origin)
        guard case .object(let members) = simple else { return simple }
        return .object(
            members + [
                ("name", .nullable(profile.name)),
                ("company", .nullable(profile.company)),
                ("blog", .string(profile.blog)),
                ("location", .nullable(profile.location)),
                ("email", .nullable(profile.email)),
                ("hireable", profile.hireable.map(JSON.bool) ?? .null),
                ("bio", .nullable(profile.bio)),
                ("twitter_username", .nullable(profile.twitterUsername)),
                ("public_repos", .int(profile.publicRepos)),
                ("public_gists", .int(profile.publicGists)),
                ("followers", .int(profile.followers)),
                ("following", .int(profile.following)),
                ("created_at", .string(profile.createdAt)),
                ("updated_at", .string(profile.updatedAt)),
            ])
    }

    /// Repository number `number` (1-based) of `owner`: `repo-N`, with deterministic varied stars.
    static func repository(number: Int, owner: GitHubProfile, origin: String) throws -> JSON {
        let template = try FixtureStore.firstResponse(fixtureFile)
        let name = "repo-\(number)"
        let encodedFullName = URLCoding.percentEncode(owner.login) + "/" + name
        let id = (owner.id % 100_000_000) * 10_000 + number
        let stars = (number * 7919) % 5000
        let forks = (number * 31) % 97
        let language = languages[number % languages.count]
        return
            template
            .mapStrings { text in
                text.replacing(GitHubFixtureRoutes.apiOrigin, with: origin)
                    .replacing(fixtureRepository, with: encodedFullName)
            }
            .removing("organization")
            .setting("id", .int(id))
            .setting("node_id", .string(nodeID("010:Repository\(id)")))
            .setting("name", .string(name))
            .setting("full_name", .string(owner.login + "/" + name))
            .setting("owner", try simpleUser(login: owner.login, id: owner.id, origin: origin))
            .setting("description", .string("Repository \(number) of \(owner.login)"))
            .setting("stargazers_count", .int(stars))
            .setting("watchers_count", .int(stars))
            .setting("watchers", .int(stars))
            .setting("forks_count", .int(forks))
            .setting("forks", .int(forks))
            .setting("language", .nullable(language))
    }

    /// GitHub's legacy global node id: base64 of a string such as `04:User583231`.
    static func nodeID(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
}
