import Clients
import WebAPI

extension GitHubBinding {
    /// `apimacro api github PATH`: GitHub's client (token, `Accept` and API version headers);
    /// its lists link their pages with `Link` headers and each page is the list; `--paginate` asks
    /// for 100 items a page, as the iterators do.
    static func apiTarget(_ runtime: Runtime) -> ApiTarget {
        let client = GitHubClient(
            configuration: GitHubConfiguration(runtime.view(of: GitHub.descriptor)), transport: runtime.transport,
            log: runtime.log, redactor: runtime.redactor, warn: runtime.transport.warn,
            learned: { [secrets = runtime.secrets] in secrets.add($0) },
            appNetwork: runtime.settings.offline ? nil : runtime.network)
        return ApiTarget(
            name: GitHub.name, client: client.api, pagination: GitHubClient.pagination, pageSize: ("per_page", "100"))
    }
}
