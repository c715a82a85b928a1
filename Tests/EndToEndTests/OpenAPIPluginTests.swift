import Foundation
import TestSupport
import Testing

/// Issue 39, "A plugin from an OpenAPI document": `apimacro plugins new NAME --from-openapi` on three
/// real public documents kept in `OpenAPI/` (see its README for their sources and licences), each
/// generated, checked, shown and run against the loopback server's `OpenAPIRoutes`; and the
/// documents it refuses, with what to do.
@Suite("plugins new --from-openapi")
struct OpenAPIPluginTests {
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("OpenAPI/\(name)").path
    }

    /// `$APIMACRO_HOME/plugins/NAME` in a workspace (HOME is the workspace).
    static func folder(_ space: Workspace, _ name: String) -> URL {
        space.url.appendingPathComponent(".config/apimacro/plugins/\(name)")
    }

    static func read(_ url: URL) throws -> String { try String(contentsOf: url, encoding: .utf8) }

    @Test(
        "Swagger Petstore (YAML, OpenAPI 3.0): names, params, OAuth2 implicit, left-outs listed; the smoke macro runs")
    func petstore() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        // Its server URL is relative (/v3): from a file, the command asks for the API's address.
        let relative = try await space.run(
            "plugins", "new", "petstore", "--from-openapi", Self.fixture("petstore.yaml"))
        #expect(relative.status == 2)
        #expect(relative.stderr.contains("server URL '/v3' is relative"), "\(relative.stderr)")
        let made = try await space.run(
            "plugins", "new", "petstore", "--from-openapi", Self.fixture("petstore.yaml"), "--base-url",
            "https://petstore3.swagger.io/api/v3")
        #expect(made.status == 0, "\(made.stderr)")
        let folder = Self.folder(space, "petstore")
        let manifest = try Self.read(folder.appendingPathComponent("plugin.toml"))
        for line in [
            #"base_url = "https://petstore3.swagger.io/api/v3""#,
            #"auth = { kind = "oauth2_implicit", authorize_url = "https://petstore.swagger.io/oauth/authorize", scope = "write:pets read:pets" }"#,
            "[endpoints.find_pets_by_status]", #"params = { status = "string" }"#, "[endpoints.get_pet_by_id]",
            #"params = { petId = "int!" }"#, "[endpoints.delete_order]", #"method = "DELETE""#,
            #"params = { id = "int", petId = "int", quantity = "int", shipDate = "string", status = "string", complete = "bool" }"#,
        ] {
            #expect(manifest.contains(line), "\(line) in:\n\(manifest)")
        }
        // No pagination (no list pages), and what plugin.toml cannot say is left out.
        #expect(!manifest.contains("pagination"))
        for gone in ["[endpoints.add_pet]", "[endpoints.upload_file]", "[endpoints.create_users_with_list_input]"] {
            #expect(!manifest.contains(gone), "\(gone)")
        }
        for reason in [
            "POST /pet (addPet): its body's required field photoUrls is array: plugin.toml sends scalar fields only",
            "POST /pet/{petId}/uploadImage (uploadFile): a binary upload (application/octet-stream): plugin.toml sends JSON bodies only",
            "GET /pet/findByTags (findPetsByTags): query parameter tags: array; plugin.toml takes string, int, float and bool",
            "DELETE /pet/{petId} (deletePet): header parameter api_key: plugin.toml has no per-endpoint headers",
            "security scheme api_key (apiKey): plugin.toml takes one auth; petstore_auth is used",
            "POST /user/createWithList (createUsersWithListInput): its JSON body is array",
        ] {
            #expect(made.stdout.contains(reason), "\(reason) in:\n\(made.stdout)")
        }
        #expect(made.stdout.contains("plugin.toml loads"))
        // The stub and the smoke macro sit beside it.
        let stub = try Self.read(folder.appendingPathComponent("petstore.pyi"))
        #expect(stub.contains("class PetstoreClient(PluginClient):"))
        #expect(
            stub.contains(
                "def find_pets_by_status(self, *, status: str | None = None, limit: int | None = None) -> PageIterator[Any]:"
            ), "\(stub)")
        #expect(stub.contains("def get_pet_by_id(self, petId: int) -> Any:"))
        let shown = try await space.run("plugins", "show", "petstore")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("find_pets_by_status(status=None, limit=None)"), "\(shown.stdout)")
        let environment = [
            "APIMACRO_PETSTORE_URL": server.baseURL + "/petstore/v3",
            "APIMACRO_PETSTORE_TOKEN": "pet-token",
        ]
        let smoke = try await space.run(
            "run", "--no-cache", "--format", "json", "petstore-smoke", environment: environment)
        #expect(smoke.status == 0, "\(smoke.stderr)")
        #expect(smoke.stdout.contains(#""name": "doggie""#), "\(smoke.stdout)")
        try space.write(
            "pet.py",
            """
            import apimacro
            petstore = apimacro.client("petstore")
            print(petstore.get_pet_by_id(petId=10)["name"], petstore.get_order_by_id(orderId=10)["status"])
            """)
        let macro = try await space.run("run", "--no-cache", "pet.py", environment: environment)
        #expect(macro.stdout == "doggie approved\n", "\(macro.stderr)")
        let asked = server.requests.filter { $0.path.hasPrefix("/petstore/") }.map(\.path)
        #expect(asked == ["/petstore/v3/pet/findByStatus", "/petstore/v3/pet/10", "/petstore/v3/store/order/10"])
        try await server.shutdown()
    }

    @Test("Uber (JSON, OpenAPI 3.0, no operationIds): names from method and path, query key, offset paging")
    func uber() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let made = try await space.run("plugins", "new", "uber", "--from-openapi", Self.fixture("uber.json"))
        #expect(made.status == 0, "\(made.stderr)")
        let manifest = try Self.read(Self.folder(space, "uber").appendingPathComponent("plugin.toml"))
        for line in [
            #"base_url = "https://api.uber.com/v1""#,
            #"auth = { kind = "query_key", param = "server_token", env = "APIMACRO_UBER_KEY" }"#,
            #"pagination = { kind = "offset", param = "offset", limit_param = "limit", total = "count" }"#,
            "[endpoints.get_products]", #"params = { latitude = "float!", longitude = "float!" }"#,
            "[endpoints.get_history]", #"params = { offset = "int" }"#, #"result = "history""#,
            "[endpoints.get_estimates_time]",
            #"params = { start_latitude = "float!", start_longitude = "float!", customer_uuid = "string", product_id = "string" }"#,
        ] {
            #expect(manifest.contains(line), "\(line) in:\n\(manifest)")
        }
        #expect(made.stdout.contains("GET /history: no operationId; named get_history from its method and path"))
        // A list the API does not page, under offset paging, returns the whole answer (no endless offsets).
        #expect(!manifest.contains(#"result = "products""#), "\(manifest)")
        #expect(
            made.stdout.contains("get_products returns a list with no paging of its own: it returns the whole answer"))
        #expect(made.stdout.contains("Left out: nothing"), "\(made.stdout)")
        let shown = try await space.run("plugins", "show", "uber")
        #expect(shown.status == 0, "\(shown.stderr)")
        let environment = [
            "APIMACRO_UBER_URL": server.baseURL + "/uber/v1", "APIMACRO_UBER_KEY": "uber-key",
        ]
        // The smoke macro reads 3 of the 7 activities: one page (5 a page).
        let smoke = try await space.run("run", "--no-cache", "--format", "json", "uber-smoke", environment: environment)
        #expect(smoke.status == 0, "\(smoke.stderr)")
        #expect(smoke.stdout.contains(#""uuid": "a3""#) && !smoke.stdout.contains(#""uuid": "a4""#), "\(smoke.stdout)")
        try space.write(
            "history.py",
            """
            import apimacro
            uber = apimacro.client("uber")
            print([a["uuid"] for a in uber.get_history()], uber.get_me()["first_name"])
            print([p["product_id"] for p in uber.get_products(latitude=37.7, longitude=-122.4)["products"]])
            """)
        let before = server.requests.count
        let all = try await space.run("run", "--no-cache", "history.py", environment: environment)
        #expect(
            all.stdout == "['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'] Uber\n['uberX']\n", "\(all.stdout)\(all.stderr)")
        // Two pages of history: offset 0, then 5; the count (7) ends it.
        let offsets = server.requests[before...].filter { $0.path == "/uber/v1/history" }.map {
            $0.query["offset"] ?? "-"
        }
        #expect(offsets == ["-", "5"])
        try await server.shutdown()
    }

    @Test("AT Protocol actor API (JSON, OpenAPI 3.1, trimmed): bearer, body cursor paging, 3.1 types")
    func atproto() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let made = try await space.run("plugins", "new", "bsky", "--from-openapi", Self.fixture("atproto-actor.json"))
        #expect(made.status == 0, "\(made.stderr)")
        let manifest = try Self.read(Self.folder(space, "bsky").appendingPathComponent("plugin.toml"))
        for line in [
            #"base_url = "https://bsky.social/xrpc""#, #"auth = { kind = "bearer", env = "APIMACRO_BSKY_TOKEN" }"#,
            #"pagination = { kind = "cursor", path = "cursor", param = "cursor" }"#,
            "[endpoints.app_bsky_actor_get_suggestions]", #"params = { cursor = "string" }"#, #"result = "actors""#,
            "[endpoints.app_bsky_actor_search_actors]",
            #"params = { term = "string", q = "string", cursor = "string" }"#,
            "[endpoints.app_bsky_actor_get_profile]", #"params = { actor = "string!" }"#,
        ] {
            #expect(manifest.contains(line), "\(line) in:\n\(manifest)")
        }
        for reason in [
            "GET /app.bsky.actor.getProfiles (app.bsky.actor.getProfiles): its required query parameter actors is array",
            "POST /app.bsky.actor.putPreferences (app.bsky.actor.putPreferences): its body's required field preferences is array",
        ] {
            #expect(made.stdout.contains(reason), "\(reason) in:\n\(made.stdout)")
        }
        #expect(made.stdout.contains("the document names 2 servers"))
        let environment = [
            "APIMACRO_BSKY_URL": server.baseURL + "/bsky/xrpc", "APIMACRO_BSKY_TOKEN": "bsky-token",
        ]
        let smoke = try await space.run("run", "--no-cache", "--format", "json", "bsky-smoke", environment: environment)
        #expect(smoke.status == 0, "\(smoke.stderr)")
        #expect(smoke.stdout.contains("actor3.bsky.social") && !smoke.stdout.contains("actor4"), "\(smoke.stdout)")
        try space.write(
            "actors.py",
            """
            import apimacro
            bsky = apimacro.client("bsky")
            print(len(list(bsky.app_bsky_actor_get_suggestions())), len(list(bsky.app_bsky_actor_get_suggestions(limit=4))))
            print(bsky.app_bsky_actor_get_profile(actor="alice.bsky.social")["followersCount"])
            """)
        let before = server.requests.count
        let all = try await space.run("run", "--no-cache", "actors.py", environment: environment)
        #expect(all.stdout == "7 4\n42\n", "\(all.stdout)\(all.stderr)")
        // Every actor: 3 pages (the last without a cursor); limit=4 stops after the second.
        let cursors = server.requests[before...].filter { $0.path == "/bsky/xrpc/app.bsky.actor.getSuggestions" }.map {
            $0.query["cursor"] ?? "-"
        }
        #expect(cursors == ["-", "page2", "page3", "-", "page2"])
        try await server.shutdown()
    }

    @Test("--dir, an existing folder (--force replaces it), a bad or taken name")
    func folderAndName() async throws {
        let space = try Workspace()
        defer { space.remove() }
        let uber = Self.fixture("uber.json")
        let made = try await space.run("plugins", "new", "ride", "--from-openapi", uber, "--dir", "out/ride")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: space.url.appendingPathComponent("out/ride/plugin.toml").path))
        #expect(FileManager.default.fileExists(atPath: space.url.appendingPathComponent("out/ride/ride.pyi").path))
        #expect(made.stdout.contains("add \(space.url.appendingPathComponent("out").path) to APIMACRO_PLUGINS"))
        let again = try await space.run("plugins", "new", "ride", "--from-openapi", uber, "--dir", "out/ride")
        #expect(again.status == 2)
        #expect(again.stderr.contains("already exists; choose another folder with --dir, or replace it with --force"))
        let forced = try await space.run(
            "plugins", "new", "ride", "--from-openapi", uber, "--dir", "out/ride", "--force")
        #expect(forced.status == 0, "\(forced.stderr)")
        let badName = try await space.run("plugins", "new", "My-API", "--from-openapi", uber)
        #expect(badName.status == 2)
        #expect(badName.stderr.contains("'My-API' is not a valid plugin name"), "\(badName.stderr)")
        let builtIn = try await space.run("plugins", "new", "github", "--from-openapi", uber)
        #expect(builtIn.status == 2)
        #expect(builtIn.stderr.contains("'github' is a built-in client"), "\(builtIn.stderr)")
        // An installed plugin's name (the shipped hackernews) is refused with where it is.
        let taken = try await space.run("plugins", "new", "hackernews", "--from-openapi", uber)
        #expect(taken.status == 2)
        #expect(taken.stderr.contains("a plugin named 'hackernews' is already installed"), "\(taken.stderr)")
    }

    @Test(
        "documents it refuses say why and what to do",
        arguments: [
            (
                "notopenapi.yaml", "title: not an API\nitems: [1, 2]\n",
                "not an OpenAPI document (no 'openapi: 3.x' at the top)"
            ),
            (
                "swagger.json", #"{"swagger": "2.0", "info": {"title": "old", "version": "1"}, "paths": {}}"#,
                "Swagger 2.0 (OpenAPI 2) is not supported, only OpenAPI 3.0 and 3.1; convert it first"
            ),
            (
                "broken.yaml", "openapi: 3.0.0\ninfo:\n  title: [unclosed\npaths: {}\n",
                "YAML that does not parse: line 4"
            ),
            ("broken.json", "{\n  \"openapi\": \"3.1.0\",\n  \"paths\": {,}\n}\n", "not valid JSON: line 3"),
            ("four.yaml", "openapi: 4.0.0\npaths: {}\n", "OpenAPI 4.0.0 is not supported, only 3.0 and 3.1"),
        ])
    func refused(file: String, text: String, message: String) async throws {
        let space = try Workspace(files: [file: text])
        defer { space.remove() }
        let result = try await space.run("plugins", "new", "thing", "--from-openapi", file)
        #expect(result.status == 2, "\(result.stdout)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: Self.folder(space, "thing").path))
    }

    @Test("a URL is fetched through apimacro's transport, and a relative server URL resolves against it")
    func fromURL() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let made = try await space.run(
            "plugins", "new", "pets", "--from-openapi", server.baseURL + "/openapi-docs/petstore.yaml")
        #expect(made.status == 0, "\(made.stderr)")
        let manifest = try Self.read(Self.folder(space, "pets").appendingPathComponent("plugin.toml"))
        #expect(manifest.contains("base_url = \"\(server.baseURL)/v3\""), "\(manifest)")
        #expect(server.requests.map(\.path) == ["/openapi-docs/petstore.yaml"])
        try await server.shutdown()
    }

    @Test("a missing file, a URL that fails and a scheme other than http(s) are refused")
    func sources() async throws {
        let server = try await TestServer.start()
        let space = try Workspace()
        defer { space.remove() }
        let missing = try await space.run("plugins", "new", "thing", "--from-openapi", "nowhere.yaml")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("nowhere.yaml: no such file"), "\(missing.stderr)")
        let ftp = try await space.run("plugins", "new", "thing", "--from-openapi", "ftp://example.com/api.yaml")
        #expect(ftp.status == 2)
        #expect(ftp.stderr.contains("only http and https URLs are fetched"), "\(ftp.stderr)")
        let gone = try await space.run(
            "plugins", "new", "thing", "--from-openapi", server.baseURL + "/status/404")
        #expect(gone.status == 2, "\(gone.stdout)")
        #expect(gone.stderr.contains("cannot fetch \(server.baseURL)/status/404"), "\(gone.stderr)")
        try await server.shutdown()
    }
}

/// The generated `.pyi` stubs and smoke macros, checked with mypy in strict mode against apimacro's
/// installed stubs (the tools' virtualenv, as `TypeCheckTests`).
@Suite("plugins new --from-openapi: the stubs type-check")
struct OpenAPIStubTests {
    @Test("the three plugins' stubs and smoke macros pass mypy --strict; a wrong call through a stub fails")
    func stubsCheck() async throws {
        let tools = try await PythonTools.virtualEnvironment()
        let space = try Workspace(files: [
            "typed.py": """
            import typing

            import apimacro

            if typing.TYPE_CHECKING:
                import bsky
                import uber


            def main() -> None:
                client = typing.cast("uber.UberClient", apimacro.client("uber"))
                history: list[typing.Any] = list(client.get_history(limit=3))
                products = client.get_products(latitude=37.7, longitude=-122.4)
                actors = typing.cast("bsky.BskyClient", apimacro.client("bsky")).app_bsky_actor_search_actors(q="x")
                print(len(history), products, next(actors))
            """,
            "wrong.py": """
            import typing

            import apimacro

            if typing.TYPE_CHECKING:
                import uber


            def main() -> None:
                client = typing.cast("uber.UberClient", apimacro.client("uber"))
                client.get_products(latitude="north", longitude=-122.4)
            """,
        ])
        defer { space.remove() }
        for (name, file) in [
            ("petstore", "petstore.yaml"), ("uber", "uber.json"), ("bsky", "atproto-actor.json"),
        ] {
            var arguments = ["plugins", "new", name, "--from-openapi", OpenAPIPluginTests.fixture(file)]
            if name == "petstore" { arguments += ["--base-url", "https://petstore3.swagger.io/api/v3"] }
            let made = try await Binary.run(arguments, in: space.url)
            #expect(made.status == 0, "\(made.stderr)")
        }
        let venv = try await TypeCheckTests.emptyVirtualEnvironment(in: space)
        let installed = try await space.run("stubs", "--install", environment: ["VIRTUAL_ENV": venv.path])
        #expect(installed.status == 0, "\(installed.stderr)")
        let plugins = ["petstore", "uber", "bsky"].map { OpenAPIPluginTests.folder(space, $0) }
        let files =
            plugins.flatMap { folder in
                [
                    folder.appendingPathComponent("\(folder.lastPathComponent).pyi").path,
                    folder.appendingPathComponent("macros/\(folder.lastPathComponent)-smoke.py").path,
                ]
            } + ["typed.py"]
        let python = URL(fileURLWithPath: tools.appendingPathComponent("bin/python").path)
        let mypy = [
            "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
            venv.appendingPathComponent("bin/python").path,
        ]
        let environment = ["MYPYPATH": plugins.map(\.path).joined(separator: ":")]
        let checked = try await Binary.run(mypy + files, in: space.url, environment: environment, executable: python)
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        let wrong = try await Binary.run(
            mypy + ["wrong.py"], in: space.url, environment: environment, executable: python)
        #expect(wrong.status == 1, "\(wrong.stdout)")
        #expect(
            wrong.stdout.contains(
                "Argument \"latitude\" to \"get_products\" of \"UberClient\" has incompatible type \"str\"; expected \"float\""
            ), "\(wrong.stdout)")
    }
}
