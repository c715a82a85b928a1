// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "apimacro",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "apimacro", targets: ["apimacro"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        // Debian's libpython3 (the interpreter apimacro embeds), found through pkg-config.
        .systemLibrary(
            name: "CPython",
            pkgConfig: "python3-embed",
            providers: [.apt(["libpython3-dev"])]
        ),
        // The only target that imports CPython (ARCHITECTURE rule 1).
        .target(name: "PythonBridge", dependencies: ["CPython"]),
        .target(
            name: "MacroRuntime",
            dependencies: ["PythonBridge"],
            resources: [.copy("Python/apimacro")]
        ),
        .executableTarget(
            name: "apimacro",
            dependencies: [
                "MacroRuntime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "PythonBridgeTests", dependencies: ["PythonBridge"]),
        .testTarget(name: "MacroRuntimeTests", dependencies: ["MacroRuntime", "PythonBridge"]),
        // Runs the built binary as a user would; depends on the executable so `swift test` builds it.
        .testTarget(name: "EndToEndTests", dependencies: ["apimacro"], exclude: ["Snapshots"]),
    ],
    swiftLanguageModes: [.v6]
)
