import Clients

extension InstagramBinding {
    /// `apimacro api instagram PATH`: Instagram's client for the backend the settings choose.
    ///
    /// Its token goes as `access_token`; each page keeps its items in `data`. The Graph API (paths
    /// relative to the versioned base URL) links the next page in `paging.next`, and a stored
    /// token is checked and refreshed as for a macro; the legacy v1 API in `pagination.next_url`.
    static func apiTarget(_ runtime: Runtime) -> ApiTarget {
        switch InstagramBackend(runtime.view(of: Instagram.descriptor)) {
        case .graph(let configuration):
            let client = Graph.client(runtime, configuration: configuration)
            var target = ApiTarget(
                name: Instagram.name, client: client.api, pagination: InstagramGraphRouter.pagination,
                items: InstagramGraphRouter.itemsPath)
            target.prepare = { try await client.prepare() }
            target.followLink = InstagramGraphRouter.withoutToken
            return target
        case .legacy(let configuration):
            let client = InstagramClient(
                configuration: configuration, transport: runtime.transport, log: runtime.log,
                redactor: runtime.redactor)
            return ApiTarget(
                name: Instagram.name, client: client.api, pagination: InstagramClient.pagination,
                items: InstagramEnvelope.dataPath)
        }
    }
}
