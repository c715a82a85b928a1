/// The users the fake GitHub knows: a few named ones, `userN` generated for any N, and `crowdN`.
struct GitHubProfile: Sendable {
    let login: String
    let id: Int
    var name: String?
    var company: String?
    var blog = ""
    var location: String?
    var email: String?
    var hireable: Bool?
    var bio: String?
    var twitterUsername: String?
    var publicRepos = 0
    var publicGists = 0
    var followers = 0
    var following = 0
    var createdAt = "2011-01-25T18:44:36Z"
    var updatedAt = "2024-01-22T12:00:00Z"

    init(login: String, id: Int) {
        self.login = login
        self.id = id
    }

    /// The known user with this login, or nil (GitHub's 404).
    static func named(_ login: String) -> GitHubProfile? {
        switch login {
        case "octocat":
            var profile = GitHubProfile(login: login, id: 583231)
            profile.name = "The Octocat"
            profile.company = "@github"
            profile.blog = "https://github.blog"
            profile.location = "San Francisco"
            profile.publicRepos = 8
            profile.publicGists = 8
            profile.followers = 3
            profile.following = 2
            return profile
        case "many":
            var profile = GitHubProfile(login: login, id: 1001)
            profile.name = "Many Repos"
            profile.bio = "Owns a lot of repositories."
            profile.publicRepos = 2000
            profile.followers = 250
            profile.following = 120
            return profile
        case "unicodé":
            var profile = GitHubProfile(login: login, id: 1002)
            profile.name = "Zoë 東京 😀"
            profile.location = "Zürich"
            profile.bio = "Ünïcødé everywhere ✓"
            profile.publicRepos = 2
            profile.followers = 1
            profile.following = 1
            return profile
        default:
            return generated(login)
        }
    }

    /// `user` followed by 1–18 digits: "User N", 3 repositories, nobody following or followed.
    ///
    /// `crowd` followed by a number up to 1,000,000: followed by that many users (the memory
    /// benchmark paginates `crowd100000`'s followers against `crowd10000`'s).
    private static func generated(_ login: String) -> GitHubProfile? {
        if login.hasPrefix("crowd"), let count = Int(login.dropFirst(5)), (0...1_000_000).contains(count),
            login.dropFirst(5).allSatisfy({ $0.isASCII && $0.isNumber })
        {
            var profile = GitHubProfile(login: login, id: 3_000_000 + count)
            profile.name = "Crowd of \(count)"
            profile.followers = count
            return profile
        }
        guard login.hasPrefix("user") else { return nil }
        let digits = login.dropFirst(4)
        guard (1...18).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let number = Int(digits)
        else { return nil }
        var profile = GitHubProfile(login: login, id: 1_000_000 + number)
        profile.name = "User \(number)"
        profile.publicRepos = 3
        return profile
    }
}
