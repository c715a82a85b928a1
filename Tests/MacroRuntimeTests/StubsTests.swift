import Clients
import Foundation
import PythonBridge
import Testing

extension EmbeddedPython {
    @Suite("the type stubs and the live module", .serialized)
    struct StubsTests {
        static let stubs = projectRoot.appendingPathComponent("Sources/MacroRuntime/Python/apimacro/__init__.pyi")
        static let checker = projectRoot.appendingPathComponent("Tests/PythonPackageTests/stubs_in_step.py")

        /// Runs `expression` with the checker's functions defined.
        func check(_ expression: String, stubs: URL = StubsTests.stubs) async throws -> PythonValue {
            try await runPython(
                """
                namespace = {'__name__': 'stubs_in_step'}
                exec(compile(open(\(try pythonLiteral(Self.checker.path))).read(), 'stubs_in_step.py', 'exec'), namespace)
                result = namespace[\(try pythonLiteral(expression))](\(try pythonLiteral(stubs.path)))
                """)
        }

        @Test("every public name of apimacro has a stub and every stub a name, with the same parameters")
        func inStep() async throws {
            let result = try await check("differences")
            guard case .list(let problems) = result else {
                Issue.record("unexpected \(result)")
                return
            }
            #expect(problems.isEmpty, "\(problems)")
        }

        @Test("the stubs name a client's variables only as its descriptor declares them (ClientSetting)")
        func settingVariables() throws {
            let descriptors = BuiltInClients.descriptors
            let declared = Set(descriptors.flatMap { $0.settings.map(\.variable) + $0.credentialVariables })
            let prefixes = descriptors.map { "APIMACRO_" + $0.name.uppercased() }
            let folder = Self.stubs.deletingLastPathComponent()
            var named = 0
            for file in ["__init__.pyi", "github_types.pyi"] {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                let regex = try NSRegularExpression(pattern: "APIMACRO_[A-Z0-9_]+")
                for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    guard let range = Range(match.range, in: text) else { continue }
                    let variable = String(text[range])
                    guard prefixes.contains(where: { variable == $0 || variable.hasPrefix($0 + "_") }) else { continue }
                    named += 1
                    #expect(declared.contains(variable), "\(file) names \(variable), which no client declares")
                }
            }
            #expect(named > 0)
        }

        @Test("the checker sees a stub that lacks a name, has an extra one, or takes other parameters")
        func checkerFindsDrift() async throws {
            let text = try String(contentsOf: Self.stubs, encoding: .utf8)
            let drifted =
                text
                .replacingOccurrences(
                    of: "def sleep(seconds: float) -> None:", with: "def sleep(delay: float) -> None:"
                )
                .replacingOccurrences(of: "\ngithub: GitHub\n", with: "\n")
                + "\ndef vanished() -> None: ...\n"
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("drift-\(UUID().uuidString).pyi")
            try drifted.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try await check("differences", stubs: file)
            guard case .list(let items) = result else {
                Issue.record("unexpected \(result)")
                return
            }
            let problems = items.compactMap { if case .string(let text) = $0 { text } else { nil } }
            #expect(problems.contains("github: in the module, not in the stub"), "\(problems)")
            #expect(problems.contains("vanished: in the stub, not in the module"), "\(problems)")
            #expect(
                problems.contains {
                    $0.hasPrefix("sleep: the module takes [('seconds', 'POSITIONAL_OR_KEYWORD', False)]")
                }, "\(problems)")
            #expect(problems.count == 3, "\(problems)")
        }

        @Test("inspect.signature and help() work on client methods and module functions")
        func signatures() async throws {
            let result = try await runPython(
                """
                import inspect, pydoc, apimacro
                from apimacro import github, instagram, shortener
                result = [str(inspect.signature(f)) for f in (
                    github.user, github.repos, github.get, github.graphql_paginate, instagram.recent_media,
                    shortener.expand, apimacro.request, apimacro.map, apimacro.sleep)]
                result.append(pydoc.render_doc(github.repos, renderer=pydoc.plaintext).splitlines()[2].strip())
                result.append('rate_limit' in pydoc.render_doc(apimacro.GitHub, renderer=pydoc.plaintext))
                """)
            #expect(
                result
                    == .list([
                        // Every client method takes the keyword-only cache= (issue 38).
                        .string("(login, *, cache=None)"), .string("(login, limit=None, *, cache=None, **params)"),
                        .string("(path, params=None, headers=None, *, cache=None)"),
                        .string("(query, path, limit=None, *, cache=None, **variables)"),
                        .string("(user_id='self', fields=None, limit=None, *, cache=None)"),
                        .string("(short_url, *, cache=None)"),
                        .string(
                            "(method, url, params=None, headers=None, json=None, data=None, files=None, auth=None, timeout=None, cache=True, check=True)"
                        ),
                        .string("(func, items, concurrency=8, *, return_exceptions=False)"), .string("(seconds)"),
                        .string("repos(login, limit=None, *, cache=None, **params) method of apimacro.GitHub instance"),
                        .bool(true),
                    ]))
        }
    }
}
