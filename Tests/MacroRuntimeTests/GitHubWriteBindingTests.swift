import Foundation
import PythonBridge
import TestSupport
import Testing

extension EmbeddedPython {
    @Suite("github.post, put, patch and delete in Python", .serialized)
    struct GitHubWriteBindingTests {
        @Test("writes return what GitHub answers, None for 204, and run natively in map")
        func writes() async throws {
            let result = try await runPython(
                """
                import apimacro
                from functools import partial
                from apimacro import github
                made = github.post('/repos/py/writes/issues', json={'title': 'first', 'labels': ['bug']})
                changed = github.patch(f"/repos/py/writes/issues/{made['number']}", json={'state': 'closed'})
                locked = github.put(f"/repos/py/writes/issues/{made['number']}/lock")
                label = github.post('/repos/py/writes/labels', json={'name': 'triage'})
                gone = github.delete('/repos/py/writes/labels/triage')
                many = apimacro.map(partial(github.post, json={'title': 'from map'}), ['/repos/py/mapped/issues'] * 3)
                result = [made['number'], made['labels'][0]['name'], changed['state'], locked, label['name'], gone,
                          sorted(m['number'] for m in many)]
                """)
            #expect(
                result
                    == .list([
                        .int(1), .string("bug"), .string("closed"), .none, .string("triage"), .none,
                        .list([.int(1), .int(2), .int(3)]),
                    ]))
            let posted = try await fixture().server.requests.filter { $0.path == "/repos/py/mapped/issues" }
            #expect(posted.count == 3 && posted.allSatisfy { $0.method == "POST" })
        }

        @Test("a 422 raises HTTPError whose errors list is GitHub's")
        func validation() async throws {
            let result = try await runPython(
                """
                import apimacro
                from apimacro import github
                github.post('/repos/py/labels/labels', json={'name': 'dup'})
                try:
                    github.post('/repos/py/labels/labels', json={'name': 'dup'})
                except apimacro.HTTPError as e:
                    result = [e.status, e.errors == [{'resource': 'Label', 'code': 'already_exists', 'field': 'name'}], str(e).endswith('Validation Failed (name: already_exists)'),
                              type(e).__name__, apimacro.APIError('x').errors]
                """)
            #expect(
                result
                    == .list([
                        .int(422),
                        .bool(true),
                        .bool(true), .string("HTTPError"), .list([]),
                    ]))
        }
    }
}
