// What every apimacro module imports for the system beneath it: FoundationEssentials (never
// Foundation proper, whose ICU data is 34 MB of the binary: docs/performance.md) and the C
// library. One place says it, so that no file reaches for `import Foundation` by habit.
#if canImport(FoundationEssentials)
    @_exported public import FoundationEssentials
#else
    @_exported public import Foundation
#endif
#if canImport(Glibc)
    @_exported public import Glibc
#elseif canImport(Darwin)
    @_exported public import Darwin
#endif
