import Clients

extension InstagramBinding {
    /// `apimacro api instagram PATH`: Instagram's client (its token as `access_token`); a page
    /// links the next in `pagination.next_url` and keeps its items in `data`.
    static func apiTarget(_ runtime: Runtime) -> ApiTarget {
        let client = InstagramClient(
            configuration: InstagramConfiguration(runtime.view(of: Instagram.descriptor)),
            transport: runtime.transport, log: runtime.log, redactor: runtime.redactor)
        return ApiTarget(
            name: Instagram.name, client: client.api, pagination: InstagramClient.pagination, items: ["data"])
    }
}
