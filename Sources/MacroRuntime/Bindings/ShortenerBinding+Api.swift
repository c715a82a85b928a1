import Clients

extension ShortenerBinding {
    /// `apimacro api shortener PATH`: the shortener's client (its key); no pages.
    static func apiTarget(_ runtime: Runtime) -> ApiTarget {
        let client = ShortenerClient(
            configuration: ShortenerConfiguration(runtime.view(of: Shortener.descriptor)),
            transport: runtime.transport, log: runtime.log, redactor: runtime.redactor)
        return ApiTarget(name: Shortener.name, client: client.api, pagination: .none)
    }
}
