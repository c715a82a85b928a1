import Clients
import WebAPI

extension ShortenerBinding {
    /// `apimacro api shortener PATH`: the shortener's client for its backend (its credential,
    /// Bitly's cap on requests in flight).
    ///
    /// `--paginate` follows each backend's pages as `links()` does: Bitly's `pagination.next`
    /// (the items in `links`), Shlink's `page` numbers (the items in `shortUrls.data`, ending at
    /// `pagesCount` or an empty page, as `links()` does); the legacy Google API has no pages.
    static func apiTarget(_ runtime: Runtime) -> ApiTarget {
        let configuration = ShortenerConfiguration(runtime.view(of: Shortener.descriptor))
        let client = ShortenerClient(
            configuration: configuration, transport: runtime.transport, log: runtime.log, redactor: runtime.redactor)
        switch configuration.backend {
        case .bitly:
            return ApiTarget(
                name: Shortener.name, client: client.api, pagination: .nextURL(path: BitlyRouter.nextPath),
                items: BitlyRouter.itemsPath)
        case .shlink:
            return ApiTarget(
                name: Shortener.name, client: client.api, pagination: ShlinkRouter.pagination,
                items: ShlinkRouter.itemsPath)
        case .google:
            return ApiTarget(name: Shortener.name, client: client.api, pagination: .none)
        }
    }
}
