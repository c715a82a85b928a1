public import WebAPI

// What the command line (the `apimacro` target, which imports MacroRuntime, Batch and
// ArgumentParser only) needs of WebAPI, named here.

/// `cache=` and `api --cache`'s rule (WebAPI's `CacheChoice`).
public typealias CacheChoice = WebAPI.CacheChoice
/// The `X-Poll-Interval` answers asked for (`run --every`).
public typealias PollInterval = WebAPI.PollInterval
/// Seconds as messages write them.
public typealias SecondsText = WebAPI.SecondsText
