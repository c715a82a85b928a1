import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `apimacro mcp` (issue 42): the macros as MCP tools, driven by the official `mcp` Python SDK
/// (Tests/python-requirements.txt) as an AI assistant's client would: over stdio, and over the
/// streamable HTTP transport.
@Suite("apimacro mcp")
struct McpTests {
    static let token = "ghp_McpServerToken0123456789"

    /// The macros every test serves: one reading GitHub (typed parameters), one that raises
    /// with the token in its message, one that writes, and one that meets another call (two
    /// calls of it end only when they run at the same time).
    static let macros: [String: String] = [
        "macros/user_info.py": #"""
        """One GitHub user's profile, as a row.

        Looks the user up on the GitHub API.
        """
        import datetime
        import enum
        from typing import Literal

        import apimacro


        class Color(enum.Enum):
            RED = "r"
            BLUE = "b"


        def main(login: str, days: int = 7, ratio: float = 0.5, loud: bool = False,
                 kind: Literal["user", "org"] = "user", since: datetime.date | None = None,
                 color: Color = Color.RED):
            """Prints a line, then outputs the user's row."""
            user = apimacro.github.user(login)
            print("looked up", user["login"])
            apimacro.output([{"login": user["login"], "days": days, "kind": kind,
                              "since": since, "color": color, "ratio": ratio, "loud": loud}])
        """#,
        "macros/boom.py": #"""
        """Always fails, quoting the token."""
        import os


        def main():
            raise ValueError("failed with " + os.environ["APIMACRO_GITHUB_TOKEN"])
        """#,
        "macros/create_issue.py": #"""
        """Opens an issue."""
        import apimacro


        def main(title: str):
            issue = apimacro.github.post("/repos/octocat/hello/issues", json={"title": title})
            return {"number": issue["number"]}
        """#,
        "macros/label.py": #"""
        """Labels an issue.

        Writes: adds a label (declared: nothing in the source shows it).
        """


        def main(number: int) -> None:
            print(number)
        """#,
        "macros/marked.py": #"""
        """Marked as writing."""
        import apimacro


        @apimacro.writes
        def main() -> None:
            print("marked")
        """#,
        ".config/apimacro/plugins/notes/plugin.toml": #"""
        name = "notes"
        description = "Notes"
        base_url = "https://notes.example.com"

        [endpoints.list_notes]
        path = "/notes"

        [endpoints.add_note]
        method = "POST"
        path = "/notes"
        params = { text = "string!" }
        """#,
        ".config/apimacro/plugins/notes/macros/jot.py": #"""
        """Adds a note through the plugin's POST endpoint."""
        import apimacro


        def main(text: str) -> None:
            apimacro.notes.add_note(text=text)
        """#,
        "macros/reader.py": #"""
        """Reads its stdin: nothing there (never the client's messages)."""
        import subprocess
        import sys


        def main() -> None:
            print("python read", repr(sys.stdin.read()))
            child = subprocess.run(["cat"], capture_output=True, text=True)
            print("child read", repr(child.stdout))
        """#,
        "macros/quiet.py": #"""
        """Does nothing."""


        def main() -> None:
            pass
        """#,
        "macros/spin.py": #"""
        """Never ends by itself."""
        import time


        def main():
            print("spinning")
            while True:
                time.sleep(0.05)
        """#,
        "macros/meet.py": #"""
        """Waits for another call of itself: two calls end only when they run at once."""
        import os
        import time

        import apimacro


        def main(me: str, other: str):
            # The call named "a" fails a check: only its own result may say so.
            apimacro.check(f"{me} is not a", me != "a", me)
            open(me, "w").close()
            for _ in range(60000):  # a hang guard of about 10 minutes, never a timing check
                if os.path.exists(other):
                    return {"met": other}
                time.sleep(0.01)
            raise RuntimeError("the other call never ran alongside")
        """#,
    ]

    /// The stdio client: the SDK starts `apimacro mcp`, lists and calls, then raw garbage lines go to a server.
    ///
    /// It prints OK at the end; any failed check exits 1.
    static let stdioClient = #"""
        import asyncio, json, os, subprocess, sys

        import anyio
        from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

        BIN = os.environ["APIMACRO_BIN"]
        TOKEN = os.environ["APIMACRO_GITHUB_TOKEN"]
        ENV = {k: os.environ[k] for k in ("APIMACRO_GITHUB_URL", "APIMACRO_GITHUB_TOKEN", "HOME", "LANG", "PATH")}


        def check(condition, what):
            if not condition:
                print("FAILED:", what, file=sys.stderr)
                sys.exit(1)


        def wire(model):
            return model.model_dump(by_alias=True, exclude_none=True, mode="json")


        def texts(result):
            return "\n".join(block.text for block in result.content if block.type == "text")


        async def serve(args, body):
            params = StdioServerParameters(command=BIN, args=["mcp", *args], env=ENV, cwd=os.getcwd())
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    check(init.protocol_version == "2025-11-25", f"protocol {init.protocol_version}")
                    check(init.server_info.name == "apimacro", "server name")
                    await body(session)


        async def read_only(session):
            tools = {tool.name: wire(tool) for tool in (await session.list_tools()).tools}
            check({"user_info", "boom", "meet"} <= set(tools), f"tools {sorted(tools)}")
            for name in ("create_issue", "label", "marked", "jot"):
                check(name not in tools, f"{name} writes: not offered without --allow-writes")
            info = tools["user_info"]
            check(info["description"].startswith("One GitHub user's profile, as a row."), info["description"])
            check("Prints a line" in info["description"], "main's docstring in the description")
            check(info["annotations"].get("readOnlyHint") is True, f"annotations {info['annotations']}")
            check(not info["annotations"].get("destructiveHint"), "not destructive")
            schema = info["inputSchema"]
            props = schema["properties"]
            check(schema["type"] == "object" and schema["required"] == ["login"], f"required {schema}")
            check(props["login"] == {"type": "string"}, f"login {props['login']}")
            check(props["days"] == {"type": "integer", "default": 7}, f"days {props['days']}")
            check(props["ratio"] == {"type": "number", "default": 0.5}, f"ratio {props['ratio']}")
            check(props["loud"] == {"type": "boolean", "default": False}, f"loud {props['loud']}")
            check(props["kind"] == {"type": "string", "enum": ["user", "org"], "default": "user"}, f"kind {props['kind']}")
            check(props["since"] == {"type": "string", "format": "date"}, f"since {props['since']}")
            check(props["color"] == {"type": "string", "enum": ["RED", "BLUE"], "default": "RED"}, f"color {props['color']}")

            # A call against the loopback server: what it printed and its rows, as text and structured.
            result = await session.call_tool(
                "user_info", {"login": "octocat", "days": 3, "since": "2024-05-01", "color": "BLUE", "kind": "org"})
            check(not result.is_error, f"user_info failed: {texts(result)}")
            rows = result.structured_content["rows"]
            check(rows == [{"login": "octocat", "days": 3, "kind": "org", "since": "2024-05-01", "color": "BLUE",
                            "ratio": 0.5, "loud": False}], f"rows {rows}")
            check("looked up octocat" in texts(result), f"printed text in the result: {texts(result)}")
            check(json.loads(result.content[-1].text) == {"rows": rows}, "rows as text too")

            # A macro that raises: a tool error with the redacted message; the server goes on.
            result = await session.call_tool("boom", {})
            check(result.is_error, "boom is an error")
            check("ValueError: failed with REDACTED" in texts(result), texts(result))
            check(TOKEN not in json.dumps(wire(result)), "the token never appears")

            # Invalid arguments: a tool error naming the parameter, the macro never run.
            result = await session.call_tool("user_info", {"login": 5})
            check(result.is_error and "'login'" in texts(result), texts(result))
            result = await session.call_tool("user_info", {"login": "octocat", "days": "x" * 1_000_000})
            check(result.is_error and "'days'" in texts(result), "a 1 MB string for an int")
            check(len(texts(result)) < 1000, "the error quotes a little of the value, not all of it")
            result = await session.call_tool("user_info", {"login": "octocat", "colour": "RED"})
            check(result.is_error and "'colour'" in texts(result), texts(result))
            result = await session.call_tool("user_info", {})
            check(result.is_error and "'login' is required" in texts(result), texts(result))
            result = await session.call_tool("user_info", {"login": "octocat", "since": "yesterday"})
            check(result.is_error and "'since'" in texts(result), texts(result))
            result = await session.call_tool("user_info", {"login": "octocat", "kind": "team"})
            check(result.is_error and "'kind'" in texts(result), texts(result))
            result = await session.call_tool("user_info", {"login": "x" * 1_000_000, "days": [1, {"a": None}]})
            check(result.is_error and "'days'" in texts(result), "wrong types")

            # A macro that writes: refused, saying how to allow it.
            try:
                await session.call_tool("create_issue", {"title": "hi"})
                check(False, "create_issue ran without --allow-writes")
            except MCPError as error:
                check("--allow-writes" in error.error.message, error.error.message)

            # Two calls at once run in parallel (each waits for the other).
            results = {}

            async def meet(me, other):
                results[me] = await session.call_tool("meet", {"me": me, "other": other})

            async with anyio.create_task_group() as group:
                group.start_soon(meet, "a", "b")
                group.start_soon(meet, "b", "a")
            # Each call's checks are its own: "a" failed one, "b" (at the same time) none.
            check(results["a"].is_error and "a is not a" in texts(results["a"]), texts(results["a"]))
            check(not results["b"].is_error, texts(results["b"]))

            # Resources: the macros' source.
            resources = {str(r.uri) for r in (await session.list_resources()).resources}
            check("apimacro://macros/user_info.py" in resources, f"resources {resources}")
            read = await session.read_resource("apimacro://macros/user_info.py")
            check("def main(login: str" in read.contents[0].text, "the macro's source")
            check("apimacro://plugins/notes/plugin.toml" in resources, f"resources {resources}")
            read = await session.read_resource("apimacro://plugins/notes/plugin.toml")
            check('name = "notes"' in read.contents[0].text, "the plugin's manifest")

            # A macro reading stdin (itself or through a child) gets nothing; the protocol goes on.
            result = await session.call_tool("reader", {})
            check("python read ''" in texts(result) and "child read ''" in texts(result), texts(result))

            # main()'s return value is structured content; a call that gives nothing says it ran.
            result = await session.call_tool("meet", {"me": "c", "other": "c"})
            check(not result.is_error and result.structured_content == {"result": {"met": "c"}}, texts(result))
            result = await session.call_tool("quiet", {})
            check(not result.is_error and texts(result) == "quiet ran and printed nothing", texts(result))

            # Still serving after all that.
            result = await session.call_tool("user_info", {"login": "octocat"})
            check(not result.is_error, texts(result))


        async def writes(session):
            tools = {tool.name: wire(tool) for tool in (await session.list_tools()).tools}
            check("create_issue" in tools, f"create_issue offered with --allow-writes: {sorted(tools)}")
            for name in ("label", "marked", "jot"):
                check(tools.get(name, {}).get("annotations", {}).get("destructiveHint") is True, f"{name}: {tools}")
            check(tools["create_issue"]["annotations"].get("destructiveHint") is True, "destructive")
            check(tools["create_issue"]["annotations"].get("readOnlyHint") is False, "not read-only")
            result = await session.call_tool("create_issue", {"title": "from an assistant"})
            check(not result.is_error, texts(result))
            check(isinstance(result.structured_content["result"]["number"], int), f"{result.structured_content}")


        async def timeouts_and_recording(session):
            # --timeout stops each call (the macro never ends by itself); the server goes on.
            result = await session.call_tool("spin", {})
            check(result.is_error and "ran longer than its --timeout of 1 s" in texts(result), texts(result))
            check("spinning" in texts(result), "what it printed before")
            # --record: the file holds each call's exchanges once the call has ended, token redacted.
            result = await session.call_tool("user_info", {"login": "octocat"})
            check(not result.is_error, texts(result))
            with open("calls.har", encoding="utf-8") as file:
                har = file.read()
            check("/users/octocat" in har, "the call's request is recorded")
            check(TOKEN not in har, "no token in the recording")


        async def replayed(session):
            # --replay: the recorded call is answered from the file; one never recorded is not.
            result = await session.call_tool("user_info", {"login": "octocat"})
            check(not result.is_error, texts(result))
            result = await session.call_tool("user_info", {"login": "hubot"})
            check(result.is_error, f"hubot was never recorded: {texts(result)}")


        def hostile():
            """Raw lines, not the SDK: garbage, wrong shapes, huge lines; each answered, the server up."""
            server = subprocess.Popen([BIN, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV)
            lines = [
                b"garbage",
                b'{"jsonrpc":"2.0","id":1,"method":"no/such/method"}',
                b"[1, 2, 3]",
                b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
                b"[" * 100000,
                b"\xff\xfe not utf-8",
                b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}',
                b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}',
                b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"user_info","arguments":[1]}}',
                b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"user_info","arguments":{"login":"'
                + b"y" * 1_000_000 + b'","days":"z"}}}',
                b'{"jsonrpc":"2.0","id":9,"method":"ping"}',
            ]
            server.stdin.write(b"\n".join(lines) + b"\n")
            server.stdin.flush()
            answers = []
            # Tool calls are answered when they end, maybe after the ping: wait for every id.
            while not {1, 2, 3, 4, 5, 9} <= {a.get("id") for a in answers}:
                line = server.stdout.readline()
                check(line, f"the server ended before answering every request: {answers}")
                answers.append(json.loads(line))
            server.stdin.close()
            check(server.wait() == 0, "the server ends with stdin")
            codes = [a.get("error", {}).get("code") for a in answers]
            check(codes.count(-32700) >= 3, f"parse errors {codes}")
            check(-32601 in codes and -32600 in codes and -32602 in codes, f"codes {codes}")
            by_id = {a.get("id"): a for a in answers}
            check(by_id[4]["result"]["isError"] is True, f"{by_id[4]}")
            check(by_id[5]["result"]["isError"] is True and "'days'" in by_id[5]["result"]["content"][0]["text"], "5")
            check(by_id[9]["result"] == {}, "the ping is answered")


        anyio.run(serve, [], read_only)
        anyio.run(serve, ["--allow-writes"], writes)
        anyio.run(serve, ["--timeout", "1", "--record", "calls.har"], timeouts_and_recording)
        anyio.run(serve, ["--replay", "calls.har"], replayed)
        hostile()
        print("OK")
        """#

    @Test(
        "the SDK over stdio: schemas, calls, a failing macro, bad arguments, writes refused, parallel calls, --timeout",
        .timeLimit(.minutes(10)))
    func stdio() async throws {
        let venv = try await PythonTools.virtualEnvironment()
        try await Workspace.withServer(files: Self.macros.merging(["client.py": Self.stdioClient]) { $1 }) {
            server, space in
            let result = try await Binary.run(
                ["client.py"], in: space.url,
                environment: [
                    "APIMACRO_BIN": Binary.url.path, "APIMACRO_GITHUB_URL": server.baseURL,
                    "APIMACRO_GITHUB_TOKEN": Self.token,
                ], executable: venv.appendingPathComponent("bin/python"))
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            #expect(result.stdout == "OK\n", "\(result.stderr)")
            #expect(!result.stderr.contains(Self.token))
        }
    }

    @Test("--http listens on loopback only: any other address is a usage error before anything starts")
    func httpLoopbackOnly() async throws {
        let space = try Workspace()
        defer { space.remove() }
        for address in ["0.0.0.0:8765", "192.168.1.2:80", "127.0.0.1", "127.0.0.1:99999"] {
            let result = try await space.run("mcp", "--http", address)
            #expect(result.status == 2, "\(address): \(result.stderr)")
            #expect(result.stderr.contains("--http takes 127.0.0.1:PORT"), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test("Ctrl-C while waiting for a message ends the server: exit 130, saying so", .timeLimit(.minutes(10)))
    func interrupted() async throws {
        let space = try Workspace(files: ["macros/hello.py": "def main() -> None:\n    print('hi')\n"])
        defer { space.remove() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[1]) }
        let log = space.url.appendingPathComponent("server.log")
        let mcp = try Spawned(
            Binary.url.path, ["mcp"], environment: Binary.environment(home: space.url), directory: space.url.path,
            stdin: .descriptor(ends[0]), stdout: .null, stderr: .file(log.path), defaultSignals: [SIGINT])
        close(ends[0])
        // The tools line comes once the server is up; stdin stays open (nothing is written).
        try await waitUntil("the server's tools line") {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(" tools: ")
        }
        kill(mcp.processIdentifier, SIGINT)
        let exit = await mcp.exit()
        #expect(exit.status == 130 && !exit.signalled, "\(exit)")
        #expect(((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("apimacro mcp interrupted"))
    }

    static let httpClient = #"""
        import os, sys, urllib.error, urllib.request

        import anyio
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        URL = sys.argv[1]


        def check(condition, what):
            if not condition:
                print("FAILED:", what, file=sys.stderr)
                sys.exit(1)


        async def main():
            async with streamable_http_client(URL) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    check(init.protocol_version == "2025-11-25", init.protocol_version)
                    names = [tool.name for tool in (await session.list_tools()).tools]
                    check("user_info" in names, names)
                    result = await session.call_tool("user_info", {"login": "octocat"})
                    check(not result.is_error, result)
                    check(result.structured_content["rows"][0]["login"] == "octocat", result.structured_content)


        anyio.run(main)

        # A web page's request (a foreign Origin) is refused.
        body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
        request = urllib.request.Request(
            URL, data=body, method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                     "Origin": "https://evil.example"})
        try:
            urllib.request.urlopen(request)
            check(False, "a foreign Origin was answered")
        except urllib.error.HTTPError as error:
            check(error.code == 403, error.code)
        # The same request from this machine's own origin is answered.
        request = urllib.request.Request(
            URL, data=body, method="POST",
            headers={"Content-Type": "application/json", "Origin": "http://127.0.0.1"})
        check(urllib.request.urlopen(request).status == 200, "loopback origin")
        print("OK")
        """#

    @Test(
        "the SDK over streamable HTTP at /mcp: initialize and a call; a foreign Origin gets 403",
        .timeLimit(.minutes(10)))
    func http() async throws {
        let venv = try await PythonTools.virtualEnvironment()
        try await Workspace.withServer(files: Self.macros.merging(["client.py": Self.httpClient]) { $1 }) {
            server, space in
            let log = space.url.appendingPathComponent("server.log")
            let mcp = try Spawned(
                Binary.url.path, ["mcp", "--http", "127.0.0.1:0"],
                environment: Binary.environment(
                    ["APIMACRO_GITHUB_URL": server.baseURL, "APIMACRO_GITHUB_TOKEN": Self.token], home: space.url),
                directory: space.url.path, stdin: .null, stdout: .file(log.path), stderr: .file(log.path))
            defer {
                kill(mcp.processIdentifier, SIGTERM)
            }
            var url = ""
            try await waitUntil("the server's address") {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                guard let line = text.split(separator: "\n").first(where: { $0.contains("serving http://") }) else {
                    return false
                }
                url = String(line.split(separator: " ").last ?? "")
                return true
            }
            let result = try await Binary.run(
                ["client.py", url], in: space.url, executable: venv.appendingPathComponent("bin/python"))
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            #expect(result.stdout == "OK\n", "\(result.stderr)")
            kill(mcp.processIdentifier, SIGTERM)
            _ = await mcp.exit()
            #expect(!((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(Self.token))
        }
    }
}
