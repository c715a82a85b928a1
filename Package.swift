// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "apimacro",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "apimacro", targets: ["apimacro"]),
        // The same native module as a CPython extension (`import apimacro` from any Python 3.11):
        // `scripts/package --wheel` ships it as `_apimacro.cpython-311-x86_64-linux-gnu.so`.
        .library(name: "ApimacroExtension", type: .dynamic, targets: ["ApimacroExtension"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // The test server's TLS mode (TestSupport only); already in the graph through AsyncHTTPClient.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The HTTP cache's encryption (ChaChaPoly) and keyed hashes (HMAC-SHA256): audited primitives.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // Debian's libpython3 (the interpreter apimacro embeds), found through pkg-config.
        .systemLibrary(
            name: "CPython",
            pkgConfig: "python3-embed",
            providers: [.apt(["libpython3-dev"])]
        ),
        // Debian's hiredis, the field's standard C client for Redis: shared state across machines
        // (APIMACRO_SHARED_STATE), used only from WebAPI's SharedState folder. Its headers sit in
        // /usr/include/hiredis and the module map links it; no pkgConfig, whose cflags
        // (-D_FILE_OFFSET_BITS=64) SwiftPM refuses with a warning on every build.
        .systemLibrary(
            name: "CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // Debian's libpq, PostgreSQL's own C client: PostgreSQL destinations and state past one
        // machine (`to="postgresql://…"`, APIMACRO_DATABASE_URL, APIMACRO_STATE), used only by Store.
        // Headers only: Store loads libpq with dlopen on the first connection, so a run that never
        // reaches PostgreSQL does not map it and the ~20 libraries it needs.
        .systemLibrary(
            name: "CPostgres",
            providers: [.apt(["libpq-dev"])]
        ),
        // Debian's libcurl (OpenSSL flavour): the transport. Headers only: WebAPI loads the
        // library with dlopen on the first request, so a macro that sends nothing never pays
        // for loading it (Benchmarks/SPIKE-transport.md).
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Debian's libjq (jq 1.6), the field's own JSON filter language: `apimacro api --jq`.
        // Headers only: the filter's child process (MacroRuntime/Api/JQChild.swift) loads the
        // library with dlopen, so no other command maps libjq and libonig.
        .systemLibrary(
            name: "CJQ",
            providers: [.apt(["libjq-dev"])]
        ),
        // The system keyring (Secret Service) through Debian's libsecret, loaded with dlopen when
        // a stored token is written or read: declarations of its own, no -dev package, no link-time
        // dependency, so the binary starts where libsecret is absent (issue 41).
        .systemLibrary(name: "CSecret"),
        // Debian's SQLite (libsqlite3-0), on its own C API: the HTTP cache and Store's state file
        // and SQLite destinations, through WebAPI's small wrapper (SQLite/). No GRDB: it imports
        // Foundation in 57 files, which links ICU's data into the binary (issue 43).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The only target that imports CPython (ARCHITECTURE rule 1). Spawning: `NativeThread`.
        .target(name: "PythonBridge", dependencies: ["CPython", "Spawning"]),
        // Requests, the pipeline stages, the transport: knows nothing of Python.
        .target(
            name: "WebAPI",
            dependencies: [
                "Platform",
                "CCurl",
                .product(name: "Logging", package: "swift-log"),
                // The persistent HTTP cache (SQLite, shared safely by concurrent processes), on
                // SQLite's C API (SQLite/ wraps it for Store too; the hit path, `CacheReader`, calls it).
                "CSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA signatures (RS256) for the JWTs a GitHub App signs: swift-crypto's RSA on
                // BoringSSL, not a hand-written one.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                "CHiredis",
                // `NativeThread`: the transfer, login-listener and Redis threads.
                "Spawning",
            ]
        ),
        // The one way a program is started and waited for (gh, the --jq child, batch's children,
        // git): posix_spawn, a reaper thread per child instead of polling, nothing on the pool;
        // `NativeThread`, the C library's threads without Foundation's `Thread`.
        .target(name: "Spawning"),
        // FoundationEssentials (never Foundation proper: ICU's 34 MB) and the C library, the one
        // import every module above makes for the system beneath it.
        .target(name: "Platform"),
        // GitHub, Instagram, shortener: routers and credentials on WebAPI.
        .target(name: "Clients", dependencies: ["Platform", "WebAPI", "Spawning", "CSecret"]),
        // plugin.toml (and config.toml): the manifest model, validation, discovery, manifest clients;
        // TOML/ is its own TOML 1.0 parser in Swift (no C++ toml++, whose assertions could abort).
        .target(name: "PluginHost", dependencies: ["Platform", "WebAPI", "Clients"]),
        .target(
            name: "MacroRuntime",
            dependencies: ["Platform", "PythonBridge", "WebAPI", "Clients", "PluginHost", "Store", "CJQ", "Spawning"],
            // The bundled Python package is found in the checkout or beside the binary
            // (`PythonPackage.candidates`), not as a resource: SwiftPM's resource accessor
            // imports Foundation, which links ICU's 34 MB.
            exclude: ["Python"]
        ),
        // `PyInit__apimacro`: MacroRuntime's module built on the interpreter of the program that imports it.
        // Release: the Swift runtime and Foundation linked in, as in the binary, so the wheel loads
        // only Debian's libraries (the static archives are position-independent).
        .target(
            name: "ApimacroExtension", dependencies: ["MacroRuntime"],
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCollections",
                        "-l_FoundationCShims", "-lswiftSynchronization", "-use-ld=lld",
                    ], .when(configuration: .release))
            ]),
        // Many macros as child processes: jobs, the runner, console, results, JUnit. No Python;
        // WebAPI only for redaction.
        .target(name: "Batch", dependencies: ["Platform", "WebAPI", "Spawning"]),
        // State between runs and the rows a run writes (SQLite upserts, CSV, JSON Lines), on
        // WebAPI's SQLite wrapper (SQLiteConnection) as the HTTP cache is. No Python: MacroRuntime
        // only binds apimacro.state, incremental and output(to=). WebAPI also for `SystemErrorText`:
        // an I/O failure in errno's words, never Foundation's. CPostgres (libpq) for PostgreSQL
        // destinations and state.
        .target(name: "Store", dependencies: ["Platform", "WebAPI", "CPostgres", "Spawning"]),
        .executableTarget(
            name: "apimacro",
            dependencies: [
                "Platform",
                "MacroRuntime",
                "Batch",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // The Swift runtime and FoundationEssentials linked into the binary: the dynamic loader
            // no longer maps and relocates a dozen libswift*/Foundation* libraries at every start
            // (docs/performance.md, Start-up). Our modules are compiled against the shared
            // FoundationEssentials, whose module does not name the static archives it needs: named
            // here (no Foundation proper, CoreFoundation or ICU: no file imports them).
            // lld: gold warns at every link that the static Foundation calls mktemp. Release only:
            // the test bundle links this target's objects too, and swift-testing has no static library.
            // scripts/link: the runtime's -lstdc++ becomes GCC's static libstdc++.a (see the file there).
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-l_FoundationCollections",
                        "-l_FoundationCShims", "-lswiftSynchronization", "-use-ld=lld",
                        "-L\(Context.packageDirectory)/scripts/link",
                        // Nothing loads symbols from the binary (libpython, libcurl and libpq are
                        // its libraries, not its plugins): none exported, 1.5 MB of symbol tables
                        // gone. Relative relocations packed (DT_RELR, glibc 2.36): 1.3 MB less.
                        "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                    ], .when(configuration: .release))
            ]
        ),
        // A real HTTP server on 127.0.0.1 that speaks the APIs' shapes and injects faults (tests only).
        .target(
            name: "TestSupport",
            dependencies: [
                // libcurl's headers only: LibcurlDefaults asks the library what it trusts by default.
                "CCurl",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/TestSupport",
            // Recorded GraphQL answers, read from the source tree like ../shared/fixtures (their
            // readers, Fixtures/*.swift, are built).
            exclude: ["Fixtures/graphql"]
        ),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"]),
        .executableTarget(name: "apimacro-testserver", dependencies: ["TestSupport"], path: "Tests/TestServerMain"),
        .testTarget(name: "PythonBridgeTests", dependencies: ["PythonBridge", "TestSupport"]),
        .testTarget(name: "WebAPITests", dependencies: ["WebAPI", "TestSupport", "CSQLite"]),
        .testTarget(name: "ClientsTests", dependencies: ["WebAPI", "Clients", "TestSupport"]),
        .testTarget(name: "PluginHostTests", dependencies: ["WebAPI", "PluginHost", "TestSupport"]),
        .testTarget(name: "BatchTests", dependencies: ["Batch"]),
        .testTarget(name: "SpawningTests", dependencies: ["Spawning"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "WebAPI"]),
        .testTarget(
            name: "MacroRuntimeTests", dependencies: ["MacroRuntime", "PythonBridge", "WebAPI", "TestSupport"]),
        // Runs the built binary as a user would; depends on the executable so `swift test` builds it.
        .testTarget(
            name: "EndToEndTests", dependencies: ["apimacro", "TestSupport"],
            exclude: ["Snapshots", "OpenAPI", "Reports"]),
    ],
    swiftLanguageModes: [.v6]
)

// Imports the compiler checks (issue 37 item 4, as Hummingbird's Package.swift does), in every
// target: a member is visible only from a module the file imports (MemberImportVisibility), and
// an import is internal unless it says `public import` because a public declaration shows that
// module's types (InternalImportsByDefault). The fuzzers, spikes and benchmarks below are left out.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("MemberImportVisibility"), .enableUpcomingFeature("InternalImportsByDefault"),
        ]
}

// Fuzzers (libFuzzer through `-sanitize=fuzzer`), only with APIMACRO_FUZZ=1: `scripts/fuzz`
// builds them in their own scratch folder. Our own modules are instrumented (coverage and
// AddressSanitizer); the dependencies are not, which keeps the build short.
if Context.environment["APIMACRO_FUZZ"] == "1" {
    let sanitize = ["-sanitize=fuzzer,address"]
    let instrumented: Set<String> = ["PythonBridge", "WebAPI", "Clients", "PluginHost"]
    for target in package.targets where instrumented.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(sanitize)]
    }
    let fuzzers: [(name: String, dependencies: [Target.Dependency])] = [
        ("LinkHeader", ["WebAPI"]),
        ("NextURL", ["WebAPI"]),
        ("RedirectURL", ["Clients", "WebAPI"]),
        ("JSONPython", ["PythonBridge"]),
        ("JSONReader", ["WebAPI"]),
        ("HAR", ["WebAPI"]),
        ("Manifest", ["PluginHost"]),
        ("TOML", ["PluginHost"]),
    ]
    package.targets.append(.target(name: "FuzzSupport", path: "Fuzz/Support"))
    for fuzzer in fuzzers {
        package.targets.append(
            .executableTarget(
                name: "fuzz-\(fuzzer.name)", dependencies: fuzzer.dependencies + ["FuzzSupport"],
                path: "Fuzz/\(fuzzer.name)", swiftSettings: [.unsafeFlags(sanitize)],
                linkerSettings: [.unsafeFlags(sanitize + ["-use-ld=lld"])]))
    }
}

// The transport spike of issue 13 (Benchmarks/SPIKE-transport.md), only with APIMACRO_SPIKE=1:
// libcurl (Debian's libcurl4-openssl-dev) against AsyncHTTPClient driven from a plain thread
// and today's Task-based path. `Benchmarks/spike.py` builds it in release mode and measures it.
if Context.environment["APIMACRO_SPIKE"] == "1" {
    // AsyncHTTPClient, the transport before libcurl, is only the spike's comparison now.
    package.dependencies.append(.package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"))
    package.targets.append(
        .systemLibrary(
            name: "CCurlLinked", path: "Benchmarks/Spike/CCurlLinked", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]))
    package.targets.append(
        .executableTarget(
            name: "transport-spike",
            dependencies: [
                "CCurlLinked", "WebAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/Spike/TransportSpike"))
}

// The JSON decode comparison of issue 13 item 5 (Benchmarks/decode.sh builds it in release), only
// with APIMACRO_BENCH_DECODE=1: it needs nothing but PythonBridge, so the release build is short.
if Context.environment["APIMACRO_BENCH_DECODE"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "json-decode-bench", dependencies: ["PythonBridge"], path: "Benchmarks/Spike/JSONDecode"))
}
