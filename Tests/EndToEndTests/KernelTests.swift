import Foundation
import TestSupport
import Testing

/// The notebook kernel (issue 42): plain ipykernel over the wheel (`python -m apimacro.kernel`),
/// its kernelspec installed and started by a real Jupyter client (`jupyter_client`), cells run
/// against the loopback server.
@Suite("the Jupyter kernel over the wheel")
struct KernelTests {
    /// Drives the kernel as a notebook front end does; prints one line per step.
    static let driver = """
        import json, os, sys, time
        from jupyter_client.manager import start_new_kernel

        base = os.environ["APIMACRO_GITHUB_URL"]
        manager, client = start_new_kernel(kernel_name="apimacro", startup_timeout=600)


        def finish(msg_id):
            outputs = []
            while True:
                message = client.get_iopub_msg(timeout=600)
                if message["parent_header"].get("msg_id") != msg_id:
                    continue
                kind, content = message["msg_type"], message["content"]
                if kind == "status" and content["execution_state"] == "idle":
                    return outputs
                if kind == "stream" and outputs and outputs[-1].get("name") == content["name"]:
                    # One print may come in several messages (the kernel flushes on a timer): joined.
                    outputs[-1]["text"] += content["text"]
                elif kind in ("stream", "display_data", "execute_result", "error"):
                    outputs.append({"kind": kind, **{k: content[k] for k in ("name", "text", "data", "ename") if k in content}})


        def run(name, code):
            print(name, json.dumps(finish(client.execute(code))), flush=True)


        run("user", "import apimacro\\nfrom apimacro import github\\nprint(github.user('octocat')['login'])")
        run("rows", "apimacro.output([{'login': '<b>x</b>', 'n': 1}, {'login': 'y & z', 'n': None}])")
        run("record", "%apimacro record session.har")
        run("recorded", "print(github.user('octocat')['login'])")
        run("live", "%apimacro live")
        run("saved", "import json; print(len(json.load(open('session.har'))['log']['entries']))")
        run("replay", "%apimacro replay " + sys.argv[1])
        run("replayed", "print(apimacro.get('https://api.github.com/users/octocat').json()['login'], github)")
        run("live-again", "%apimacro live")
        slow = client.execute("apimacro.get(%r, params={'ms': '600000'})" % (base + "/slow"))
        while not os.path.exists("slow-seen"):
            time.sleep(0.02)
        manager.interrupt_kernel()
        print("interrupted", json.dumps(finish(slow)), flush=True)
        run("after", "print(github.user('octocat')['login'])")
        run("failed", "github.user('no-such-user-here')")
        run("still", "print(github.user('octocat')['login'])")
        manager.restart_kernel(now=True)
        client.wait_for_ready(timeout=600)
        run("restarted", "import apimacro\\nprint(apimacro.github.user('octocat')['login'])")
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        """

    @Test(
        "jupyter_client runs cells: a GitHub call, rows as escaped HTML, record and replay magics, an interrupt, a restart"
    )
    func notebookSession() async throws {
        let server = try await TestServer.start()
        let space = try Workspace(files: ["drive.py": Self.driver])
        defer { space.remove() }
        let venv = try await WheelTests.virtualEnvironment()
        let tools = try await PythonTools.virtualEnvironment()
        let python = venv.appendingPathComponent("bin/python")
        let jupyter = space.url.appendingPathComponent("jupyter")
        // ipykernel and jupyter_client from the tests' tools (Tests/python-requirements.txt).
        let environment = [
            "PYTHONPATH": tools.appendingPathComponent("lib/python3.11/site-packages").path,
            "JUPYTER_PATH": jupyter.appendingPathComponent("share/jupyter").path,
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_REQUEST_TIMEOUT": "600",
        ]
        // The binary's command, for the active virtualenv: it runs that Python's installer.
        let installed = try await Binary.run(
            ["kernel", "install", "--prefix", jupyter.path], in: space.url,
            environment: environment.merging(["VIRTUAL_ENV": venv.path]) { $1 })
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(
            installed.stdout.contains("installed the kernelspec apimacro in \(jupyter.path)"), "\(installed.stdout)")
        let spec = jupyter.appendingPathComponent("share/jupyter/kernels/apimacro/kernel.json")
        #expect(try String(contentsOf: spec, encoding: .utf8).contains(python.path))
        let cassette = WheelTests.repository.appendingPathComponent("examples/cassettes/github-profile.har")
        let result = try await Binary.run(
            ["drive.py", cassette.path], in: space.url, environment: environment, executable: python
        ) { process in
            // Or the program ended early (its output says why): no wait for the hang guard.
            try await waitUntil("the slow request to reach the server") {
                server.requests.contains { $0.path == "/slow" } || !process.isRunning
            }
            try space.write("slow-seen", "")
        }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        var steps: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { steps[parts[0]] = parts[1] }
        }
        #expect(steps["user"] == #"[{"kind": "stream", "name": "stdout", "text": "octocat\n"}]"#, "\(result.stdout)")
        let rows = try #require(steps["rows"])
        #expect(rows.contains(#""text/html": "<table class=\"apimacro-rows\">"#), "\(rows)")
        #expect(rows.contains("<td>&lt;b&gt;x&lt;/b&gt;</td>") && rows.contains("<td>y &amp; z</td>"), "\(rows)")
        #expect(!rows.contains("<b>x</b></td>"), "\(rows)")
        #expect(steps["recorded"]?.contains("octocat") == true, "\(result.stdout)")
        #expect(steps["saved"]?.contains(#""text": "1\n""#) == true, "the recording holds the call: \(result.stdout)")
        // Replayed from the cassette: api.github.com is never reached (no network in the tests).
        #expect(steps["replayed"]?.contains("octocat <apimacro.github") == true, "\(result.stdout)")
        #expect(steps["interrupted"]?.contains(#""ename": "KeyboardInterrupt""#) == true, "\(result.stdout)")
        #expect(steps["after"] == #"[{"kind": "stream", "name": "stdout", "text": "octocat\n"}]"#, "\(result.stdout)")
        // A failed cell leaves the session's clients as they were; a restart reads the settings again.
        #expect(steps["failed"]?.contains(#""ename": "NotFound""#) == true, "\(result.stdout)")
        #expect(steps["still"] == #"[{"kind": "stream", "name": "stdout", "text": "octocat\n"}]"#, "\(result.stdout)")
        #expect(
            steps["restarted"] == #"[{"kind": "stream", "name": "stdout", "text": "octocat\n"}]"#, "\(result.stdout)")
        try await server.shutdown()
    }

    /// Runs one cell that pages through 230 stargazers 20 a page, each page answered 200 ms late,
    /// and prints every output and display update of it as JSON.
    static let progressDriver = """
        import json
        from jupyter_client.manager import start_new_kernel

        manager, client = start_new_kernel(kernel_name="apimacro", startup_timeout=600)
        code = (
            "import apimacro\\nfrom apimacro import github\\n"
            "print(sum(1 for _ in github.paginate('/repos/octocat/Hello-World/stargazers', params={'per_page': 20})))"
        )
        msg_id = client.execute(code)
        outputs = []
        while True:
            message = client.get_iopub_msg(timeout=600)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "status" and content["execution_state"] == "idle":
                break
            if kind in ("stream", "display_data", "update_display_data", "error"):
                outputs.append({
                    "kind": kind, "text": content.get("text", content.get("data", {}).get("text/plain")),
                    "id": content.get("transient", {}).get("display_id"),
                })
        print(json.dumps(outputs), flush=True)
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        """

    @Test("a long pagination shows its progress in one display under the cell, updated in place, cleared at the end")
    func paginationProgress() async throws {
        let server = try await TestServer.start()
        // Every answer 200 ms late: twelve pages take well over the progress line's half second
        // (load only makes them later), so the display must appear and be updated.
        server.setBudget(limit: 100_000, delayMilliseconds: 200)
        let space = try Workspace(files: ["drive.py": Self.progressDriver])
        defer { space.remove() }
        let venv = try await WheelTests.virtualEnvironment()
        let tools = try await PythonTools.virtualEnvironment()
        let jupyter = space.url.appendingPathComponent("jupyter")
        let environment = [
            "PYTHONPATH": tools.appendingPathComponent("lib/python3.11/site-packages").path,
            "JUPYTER_PATH": jupyter.appendingPathComponent("share/jupyter").path,
            "APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_REQUEST_TIMEOUT": "600",
            "APIMACRO_GITHUB_TOKEN": "ghp_progressToken0123456789",
        ]
        let installed = try await Binary.run(
            ["kernel", "install", "--prefix", jupyter.path], in: space.url,
            environment: environment.merging(["VIRTUAL_ENV": venv.path]) { $1 })
        #expect(installed.status == 0, "\(installed.stderr)")
        let result = try await Binary.run(
            ["drive.py"], in: space.url, environment: environment,
            executable: venv.appendingPathComponent("bin/python"))
        try await server.shutdown()
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let line = try #require(result.stdout.split(separator: "\n").last.map(String.init))
        let outputs = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [[String: Any]], "\(result.stdout)")
        let shown = outputs.filter { $0["kind"] as? String == "display_data" }
        let updates = outputs.filter { $0["kind"] as? String == "update_display_data" }
        #expect(shown.count == 1, "one display for the pagination: \(outputs)")
        let id = try #require(shown.first?["id"] as? String, "\(outputs)")
        #expect((shown.first?["text"] as? String)?.hasPrefix("github: ") == true, "\(outputs)")
        #expect(updates.count >= 2 && updates.allSatisfy { $0["id"] as? String == id }, "\(outputs)")
        #expect(updates.dropLast().contains { ($0["text"] as? String)?.contains(" pages · ") == true }, "\(outputs)")
        // Taken away at the end; the cell's own output is whole, and no token is in any of it.
        #expect((updates.last?["text"] as? String) == "", "\(outputs)")
        #expect(
            outputs.contains { $0["kind"] as? String == "stream" && $0["text"] as? String == "230\n" }, "\(outputs)")
        #expect(!result.stdout.contains("ghp_progressToken"))
    }

    /// Runs a notebook's code cells in order on the kernel, in the notebook's folder, as Jupyter
    /// does; prints each cell's outputs as a JSON line.
    static let notebookRunner = """
        import json, sys
        from jupyter_client.manager import start_new_kernel

        notebook = json.load(open(sys.argv[1]))
        manager, client = start_new_kernel(kernel_name="apimacro", startup_timeout=600, cwd=sys.argv[2])
        for cell in notebook["cells"]:
            if cell["cell_type"] != "code":
                continue
            msg_id = client.execute("".join(cell["source"]))
            outputs = []
            while True:
                message = client.get_iopub_msg(timeout=600)
                if message["parent_header"].get("msg_id") != msg_id:
                    continue
                if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                    break
                if message["msg_type"] in ("stream", "display_data", "execute_result", "error"):
                    outputs.append(message["content"])
            print(json.dumps(outputs), flush=True)
        client.stop_channels()
        manager.shutdown_kernel(now=True)
        """

    @Test("the example notebook replays its cassette with no token and shows the repositories as a table")
    func exampleNotebook() async throws {
        let space = try Workspace(files: ["run.py": Self.notebookRunner])
        defer { space.remove() }
        let venv = try await WheelTests.virtualEnvironment()
        let tools = try await PythonTools.virtualEnvironment()
        let python = venv.appendingPathComponent("bin/python")
        let jupyter = space.url.appendingPathComponent("jupyter")
        let examples = WheelTests.repository.appendingPathComponent("examples")
        // No APIMACRO_GITHUB_URL and no token: only the cassette can answer.
        let environment = [
            "PYTHONPATH": tools.appendingPathComponent("lib/python3.11/site-packages").path,
            "JUPYTER_PATH": jupyter.appendingPathComponent("share/jupyter").path,
        ]
        let installed = try await Binary.run(
            ["-m", "apimacro.kernel", "install", "--prefix", jupyter.path], in: space.url,
            environment: environment, executable: python)
        #expect(installed.status == 0, "\(installed.stderr)")
        let result = try await Binary.run(
            ["run.py", examples.appendingPathComponent("top-repos.ipynb").path, examples.path], in: space.url,
            environment: environment, executable: python)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(!result.stdout.contains("\"ename\""), "a cell failed: \(result.stdout)")
        let table = try #require(result.stdout.split(separator: "\n").last.map(String.init))
        #expect(table.contains(#""text/html": "<table class=\"apimacro-rows\">"#), "\(table)")
        #expect(table.contains("<tr><td>repo-5</td><td>4595</td><td>Ruby</td></tr>"), "\(table)")
    }

    @Test("kernel install says what is missing: no virtualenv, a Python without the wheel, --user with --prefix")
    func installRefusals() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let none = try await space.run("kernel", "install")
        #expect(none.status == 2)
        #expect(none.stderr.contains("no virtualenv is active (VIRTUAL_ENV is not set)"), "\(none.stderr)")
        let bare = try await space.run("kernel", "install", "--python", "/usr/bin/python3")
        #expect(bare.status == 2)
        #expect(
            bare.stderr.contains("/usr/bin/python3 has no apimacro wheel (the module _apimacro)"), "\(bare.stderr)")
        let both = try await space.run("kernel", "install", "--user", "--prefix", space.url.path)
        #expect(both.status == 2)
        #expect(both.stderr.contains("--user and --prefix exclude each other"), "\(both.stderr)")
    }
}
