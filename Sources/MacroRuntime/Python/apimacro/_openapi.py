"""``apimacro plugins new NAME --from-openapi FILE_OR_URL``: a plugin folder from an OpenAPI
3.0 or 3.1 document (JSON or YAML).

``generate`` reads the document and returns the files to write (``plugin.toml``, a ``.pyi``
stub of the client, a smoke macro) and what could not be mapped onto plugin.toml, which the
command prints: nothing is dropped silently. The host writes the files and loads the manifest.
"""

import json
import keyword
import re
import urllib.parse

METHODS = ("get", "put", "post", "delete", "patch", "options", "head", "trace")
MANIFEST_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
BODY_METHODS = ("POST", "PUT", "PATCH")
RESERVED_METHODS = ("call", "get", "paginate", "endpoints", "name")
SCALARS = {"string": "string", "integer": "int", "number": "float", "boolean": "bool"}
PY_TYPES = {"string": "str", "int": "int", "float": "float", "bool": "bool"}

# Names that say what a parameter or property is for paging.
CURSOR_PARAMS = (
    "cursor", "after", "starting_after", "page_token", "pagetoken", "next_token", "nexttoken",
    "pagination_token", "continuation", "continuation_token", "continuationtoken", "marker",
    "page_cursor", "pagecursor", "next",
)
CURSOR_PROPS = (
    "next_cursor", "nextcursor", "next_page_token", "nextpagetoken", "next_token", "nexttoken",
    "endcursor", "end_cursor", "cursor", "next_marker", "nextmarker", "continuation_token",
    "continuationtoken", "next_page_cursor", "nextpagecursor", "pagination_token",
)
OFFSET_PARAMS = ("offset", "skip", "start", "from")
LIMIT_PARAMS = ("limit", "per_page", "perpage", "page_size", "pagesize", "size", "count", "max", "rows", "top", "take")
PAGE_PARAMS = ("page", "page_number", "pagenumber", "pageno", "p")
TOTAL_PROPS = ("total", "total_count", "totalcount", "total_results", "totalresults", "count", "totalitems", "total_items")
NEXT_URL_PROPS = ("next", "next_url", "nexturl", "next_page_url", "nextpageurl", "next_link", "nextlink", "@odata.nextlink")
LIST_PROPS = (
    "data", "items", "results", "result", "records", "entries", "values", "list", "hits", "members",
    "elements", "objects", "rows", "content", "nodes", "edges",
)
PAGING_KINDS = ("cursor", "header_cursor", "link_header", "next_url", "offset", "page_param")


class OpenAPIProblem(Exception):
    """A document that cannot be read or is not OpenAPI 3: the message says what to do."""


# -- reading --------------------------------------------------------------------------------


def read_source(source):
    """The document's text and the URL it came from (None for a file)."""
    parsed = urllib.parse.urlsplit(source)
    if parsed.scheme and len(parsed.scheme) > 1:
        if parsed.scheme.lower() not in ("http", "https"):
            raise OpenAPIProblem(
                f"{source}: only http and https URLs are fetched; download the document and give its file instead"
            )
        import apimacro

        try:
            response = apimacro.get(source)
        except apimacro.APIError as error:
            raise OpenAPIProblem(f"cannot fetch {source}: {error}; check the URL or give a downloaded file") from None
        return response.text, source
    try:
        with open(source, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise OpenAPIProblem(f"{source}: no such file; give the path of an OpenAPI document (JSON or YAML) or its URL") from None
    except OSError as error:
        raise OpenAPIProblem(f"{source}: cannot be read ({error.strerror}); check the path and its permissions") from None
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as error:
        raise OpenAPIProblem(f"{source}: not UTF-8 text (byte {error.start}); an OpenAPI document is JSON or YAML text") from None


def parse(text, source):
    """The document as Python data: JSON when it starts with ``{``, else YAML (PyYAML)."""
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise OpenAPIProblem(f"{source}: not valid JSON: line {error.lineno}, column {error.colno}: {error.msg}") from None
    try:
        import yaml
    except ImportError:
        raise OpenAPIProblem(
            "reading YAML needs PyYAML for the Python apimacro embeds: install Debian's python3-yaml "
            "(sudo apt-get install python3-yaml), or give the document as JSON"
        ) from None
    class NoAliasLoader(yaml.SafeLoader):
        """PyYAML's safe loader without anchors and aliases: a document from a server could nest
        aliases to make a walk over it take for ever (a "billion laughs"), or make one refer to
        itself; OpenAPI documents share parts with $ref instead."""

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.YAMLError(
                    f"line {event.start_mark.line + 1}: YAML aliases (*{event.anchor}) are not read; "
                    "an OpenAPI document shares its parts with $ref: expand the alias and run again")
            return super().compose_node(parent, index)

    try:
        return yaml.load(text, Loader=NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise OpenAPIProblem(f"{source}: YAML that does not parse: {where}{problem}; fix the YAML and run again") from None


def check_version(document, source):
    """Accepts OpenAPI 3.0 and 3.1; says what to do with anything else."""
    if not isinstance(document, dict):
        raise OpenAPIProblem(f"{source}: not an OpenAPI document (its top level is not a mapping)")
    if "swagger" in document:
        raise OpenAPIProblem(
            f"{source}: Swagger {document.get('swagger')} (OpenAPI 2) is not supported, only OpenAPI 3.0 and 3.1; "
            "convert it first (e.g. npx swagger2openapi FILE -o openapi.yaml, or editor.swagger.io's Edit > Convert to OpenAPI 3)"
        )
    version = document.get("openapi")
    if version is None:
        raise OpenAPIProblem(f"{source}: not an OpenAPI document (no 'openapi: 3.x' at the top)")
    if not re.match(r"^3\.[01](\.|$)", str(version)):
        raise OpenAPIProblem(f"{source}: OpenAPI {version} is not supported, only 3.0 and 3.1")
    if not isinstance(document.get("paths"), dict) or not document["paths"]:
        raise OpenAPIProblem(f"{source}: the document has no paths, so no endpoint to make")


# -- names ----------------------------------------------------------------------------------


def snake(text):
    """``listRepos`` → ``list_repos``, ``get-user.by ID`` → ``get_user_by_id``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(text))
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return re.sub(r"_+", "_", text)


def is_identifier(name):
    return bool(re.match(r"^[a-z][a-z0-9_]*$", name))


def environment_prefix(name):
    return "APIMACRO_" + name.upper()


# -- the document ---------------------------------------------------------------------------


class Document:
    """An OpenAPI document with its local ``$ref``s resolved on demand."""

    def __init__(self, data):
        self.data = data

    def resolve(self, node, seen=()):
        """``node`` with a local ``$ref`` followed (a ref outside the document raises)."""
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#/"):
                raise OpenAPIProblem(f"$ref {ref!r} points outside the document")
            if ref in seen:
                return {}
            seen = seen + (ref,)
            target = self.data
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(target, dict) or part not in target:
                    raise OpenAPIProblem(f"$ref {ref!r} names nothing in the document")
                target = target[part]
            node = target
        return node

    def schema(self, node, depth=0):
        """A schema with refs resolved and ``allOf`` merged (one level of properties)."""
        node = self.resolve(node) if node is not None else {}
        if not isinstance(node, dict):
            return {}
        if "allOf" in node and depth < 8:
            merged = {key: value for key, value in node.items() if key != "allOf"}
            properties = dict(merged.get("properties") or {})
            required = list(merged.get("required") or [])
            for part in node["allOf"]:
                part = self.schema(part, depth + 1)
                properties.update(part.get("properties") or {})
                required += part.get("required") or []
                for key in ("type", "items"):
                    if key in part and key not in merged:
                        merged[key] = part[key]
            if properties:
                merged["properties"] = properties
                merged.setdefault("type", "object")
            merged["required"] = required
            return merged
        return node


def schema_type(schema):
    """The schema's type: 3.1's list form without ``null``; ``string`` for a bare enum."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind is None:
        if "enum" in schema:
            return "string"
        if "properties" in schema:
            return "object"
        if "items" in schema:
            return "array"
    return kind


# -- mapping --------------------------------------------------------------------------------


class Mapper:
    def __init__(self, name, document, source, source_url, base_url):
        self.name = name
        self.doc = Document(document)
        self.data = document
        self.source = source
        self.source_url = source_url
        self.base_url_option = base_url
        self.left_out = []
        self.notes = []
        self.endpoints = []

    def leave_out(self, text):
        self.left_out.append(text)

    # -- base URL

    def base_url(self):
        servers = self.data.get("servers") or []
        server = servers[0] if servers and isinstance(servers[0], dict) else {"url": "/"}
        url = str(server.get("url") or "/")
        for variable, spec in (server.get("variables") or {}).items():
            default = spec.get("default") if isinstance(spec, dict) else None
            if default is not None:
                url = url.replace("{" + variable + "}", str(default))
        if len(servers) > 1:
            self.notes.append(
                f"the document names {len(servers)} servers; base_url is the first ({url}), "
                f"APIMACRO_{self.name.upper()}_URL chooses another"
            )
        if self.base_url_option:
            return self.base_url_option.rstrip("/")
        if re.match(r"^https?://", url, re.I):
            if "{" in url:
                raise OpenAPIProblem(f"the server URL {url} has a variable with no default; give --base-url URL")
            return url.rstrip("/")
        if self.source_url:
            return urllib.parse.urljoin(self.source_url, url).rstrip("/")
        raise OpenAPIProblem(
            f"the document's server URL {url!r} is relative and the document came from a file; "
            "give the API's address with --base-url https://HOST/PATH"
        )

    # -- auth

    def auth(self):
        schemes = (self.data.get("components") or {}).get("securitySchemes") or {}
        counts = {}
        top = self.data.get("security")
        for path, item in self.operations():
            requirements = item[2].get("security", top) or []
            for requirement in requirements:
                for scheme in (requirement or {}):
                    counts[scheme] = counts.get(scheme, 0) + 1
        for scheme in (top or []):
            for name in (scheme or {}):
                counts.setdefault(name, 0)
        usable = [name for name in sorted(counts, key=lambda n: -counts[n]) if name in schemes]
        chosen = None
        table = {"kind": "none"}
        prefix = environment_prefix(self.name)
        for scheme_name in usable:
            scheme = self.doc.resolve(schemes[scheme_name])
            mapped, note = self.map_scheme(scheme_name, scheme, prefix)
            if mapped is None:
                self.leave_out(f"security scheme {scheme_name}: {note}")
                continue
            if chosen is None:
                chosen, table = scheme_name, mapped
                if note:
                    self.notes.append(f"security scheme {scheme_name}: {note}")
            else:
                self.leave_out(
                    f"security scheme {scheme_name} ({scheme.get('type')}): plugin.toml takes one auth; "
                    f"{chosen} is used, the scheme most operations name"
                )
        return table, chosen

    def map_scheme(self, name, scheme, prefix):
        kind = scheme.get("type")
        if kind == "apiKey":
            where = scheme.get("in")
            if where == "header":
                return {"kind": "header_key", "header": scheme.get("name", "X-API-Key"), "env": prefix + "_KEY"}, None
            if where == "query":
                return {"kind": "query_key", "param": scheme.get("name", "api_key"), "env": prefix + "_KEY"}, None
            return None, f"an API key in a {where}: plugin.toml sends keys in a header or the query only"
        if kind == "http":
            http = str(scheme.get("scheme", "")).lower()
            if http == "bearer":
                return {"kind": "bearer", "env": prefix + "_TOKEN"}, None
            if http == "basic":
                return {"kind": "basic", "user_env": prefix + "_USER", "env": prefix + "_PASSWORD"}, None
            return None, f"HTTP {http} authentication: plugin.toml takes bearer and basic"
        if kind == "oauth2":
            flows = scheme.get("flows") or {}
            if "implicit" in flows:
                flow = flows["implicit"]
                table = {"kind": "oauth2_implicit", "authorize_url": flow.get("authorizationUrl", "")}
                scopes = list((flow.get("scopes") or {}).keys())
                if scopes:
                    table["scope"] = " ".join(scopes)
                return table, None
            flow_names = ", ".join(sorted(flows)) or "no flow"
            return (
                {"kind": "bearer", "env": prefix + "_TOKEN"},
                f"OAuth2 ({flow_names}) is mapped to bearer: plugin.toml can run only the implicit flow, so get an "
                f"access token elsewhere and set {prefix}_TOKEN (or store it with apimacro login {self.name})",
            )
        if kind == "openIdConnect":
            return (
                {"kind": "bearer", "env": prefix + "_TOKEN"},
                f"OpenID Connect is mapped to bearer: get a token from the provider and set {prefix}_TOKEN",
            )
        return None, f"type {kind!r} is not one plugin.toml can express"

    # -- operations

    def operations(self):
        """(path, (method, path item, operation)) in document order (read once)."""
        if getattr(self, "_operations", None) is not None:
            return self._operations
        found = []
        for path, item in (self.data.get("paths") or {}).items():
            try:
                item = self.doc.resolve(item)
            except OpenAPIProblem as problem:
                self.leave_out(f"{path}: {problem}")
                continue
            if not isinstance(item, dict):
                continue
            for method in METHODS:
                operation = item.get(method)
                if isinstance(operation, dict):
                    found.append((path, (method, item, operation)))
        self._operations = found
        return found

    def map_operations(self, auth_names):
        names = set()
        for path, (method, item, operation) in self.operations():
            label = f"{method.upper()} {path}"
            if operation.get("operationId"):
                label += f" ({operation['operationId']})"
            before = (len(self.left_out), len(self.notes))
            try:
                endpoint = self.map_operation(path, method, item, operation, label, auth_names)
            except OpenAPIProblem as problem:
                # The whole operation is left out: its reason alone, not its parts'.
                del self.left_out[before[0]:]
                del self.notes[before[1]:]
                self.leave_out(f"{label}: {problem}")
                continue
            if endpoint is None:
                continue
            if endpoint["name"] in names:
                self.leave_out(f"{label}: its name {endpoint['name']} is taken by an earlier operation")
                continue
            names.add(endpoint["name"])
            self.endpoints.append(endpoint)
        webhooks = self.data.get("webhooks") or {}
        for hook in webhooks:
            self.leave_out(f"webhook {hook}: apimacro calls APIs, it does not receive their requests")

    def endpoint_name(self, method, path, operation, label):
        operation_id = operation.get("operationId")
        if operation_id:
            name = snake(operation_id)
            if not is_identifier(name):
                cleaned = name.lstrip("_0123456789")
                if not is_identifier(cleaned):
                    self.leave_out(f"{label}: operationId {operation_id!r} gives no usable name (letters, digits and _)")
                    return None
                name = cleaned
        else:
            words = [part for part in re.split(r"[/{}]+", path) if part]
            name = snake(method + "_" + "_".join(words)) if words else f"{method}_root"
            if not is_identifier(name):
                self.leave_out(f"{label}: no operationId, and its method and path give no usable name")
                return None
            self.notes.append(f"{label}: no operationId; named {name} from its method and path")
        if name in RESERVED_METHODS or keyword.iskeyword(name):
            self.notes.append(f"{label}: {name} is reserved on a client; named {name}_op")
            name += "_op"
        return name

    def map_operation(self, path, method, item, operation, label, auth_names):
        verb = method.upper()
        if verb not in MANIFEST_METHODS:
            self.leave_out(f"{label}: method {verb}: plugin.toml takes GET, POST, PUT, PATCH and DELETE")
            return None
        name = self.endpoint_name(method, path, operation, label)
        if name is None:
            return None
        for callback in operation.get("callbacks") or {}:
            self.leave_out(f"{label}: callback {callback}: apimacro does not receive the API's requests (the operation is kept)")
        if operation.get("servers"):
            self.notes.append(f"{label}: has servers of its own; it is called on base_url")
        params = {}
        schemas = {}
        merged = {}
        for raw in list(item.get("parameters") or []) + list(operation.get("parameters") or []):
            parameter = self.doc.resolve(raw)
            if isinstance(parameter, dict) and "name" in parameter:
                merged[(parameter["name"], parameter.get("in"))] = parameter
        query_names = []
        body_method = verb in BODY_METHODS
        for (pname, where), parameter in merged.items():
            required = bool(parameter.get("required")) or where == "path"
            what = f"{label}: {where} parameter {pname}"
            if where == "header":
                if pname.lower() == "authorization" or pname.lower() in {name.lower() for name in auth_names}:
                    continue
                if required:
                    raise OpenAPIProblem(f"its required header {pname} cannot be sent (plugin.toml has no per-endpoint headers)")
                self.leave_out(f"{what}: plugin.toml has no per-endpoint headers (add it to [headers] if constant)")
                continue
            if where == "cookie":
                if required:
                    raise OpenAPIProblem(f"its required cookie {pname} cannot be sent")
                self.leave_out(f"{what}: plugin.toml sends no cookies")
                continue
            if where == "query" and pname in auth_names:
                continue
            schema = self.doc.schema(parameter.get("schema") or next(iter((parameter.get("content") or {}).values()), {}).get("schema"))
            ptype = SCALARS.get(schema_type(schema))
            if ptype is None:
                kind = schema_type(schema) or "no type"
                if required:
                    raise OpenAPIProblem(f"its required {where} parameter {pname} is {kind}; plugin.toml takes string, int, float and bool")
                self.leave_out(f"{what}: {kind}; plugin.toml takes string, int, float and bool")
                continue
            if where == "query" and body_method:
                if required:
                    raise OpenAPIProblem(f"its required query parameter {pname} cannot be sent: plugin.toml sends a {verb}'s parameters as a JSON body")
                self.leave_out(f"{what}: plugin.toml sends a {verb}'s parameters as a JSON body, not in the query")
                continue
            params[pname] = (ptype, required)
            schemas[pname] = schema
            if where == "query":
                query_names.append(pname)
        body = operation.get("requestBody")
        if body is not None:
            self.map_body(label, verb, self.doc.resolve(body), params)
        for placeholder in re.findall(r"{([^}]+)}", path):
            if placeholder not in params:
                params[placeholder] = ("string", True)
                self.notes.append(f"{label}: path parameter {placeholder} is not declared; taken as a string")
        response, result_schema, headers = self.success(operation)
        endpoint = {
            "name": name, "method": verb, "path": path, "params": params, "response": response,
            "summary": self.summary(operation), "label": label, "list": False, "result": "", "paging": None,
            "schemas": schemas,
        }
        if response == "json" and verb == "GET" and result_schema is not None:
            self.find_list(endpoint, result_schema, headers, query_names)
        return endpoint

    def map_body(self, label, verb, body, params):
        content = body.get("content") or {}
        required = bool(body.get("required"))
        json_type = next((kind for kind in content if kind.split(";")[0].strip().lower() == "application/json" or kind.endswith("+json")), None)
        if verb not in BODY_METHODS:
            if required:
                raise OpenAPIProblem(f"a {verb} with a body: plugin.toml sends a {verb}'s parameters in the query")
            self.leave_out(f"{label}: its optional body: plugin.toml sends a {verb}'s parameters in the query")
            return
        if json_type is None:
            kinds = ", ".join(content) or "no content type"
            if any(kind.startswith("multipart/") for kind in content):
                reason = f"a multipart upload ({kinds})"
            elif any("octet-stream" in kind for kind in content):
                reason = f"a binary upload ({kinds})"
            else:
                reason = f"a body of {kinds}"
            raise OpenAPIProblem(f"{reason}: plugin.toml sends JSON bodies only")
        schema = self.doc.schema(content[json_type].get("schema"))
        if schema_type(schema) != "object" or not schema.get("properties"):
            raise OpenAPIProblem(
                f"its JSON body is {schema_type(schema) or 'a schema with no properties'}: "
                "plugin.toml sends a body of named scalar fields"
            )
        needed = set(schema.get("required") or []) if required else set()
        for prop, spec in schema["properties"].items():
            spec = self.doc.schema(spec)
            if spec.get("readOnly"):
                continue
            ptype = SCALARS.get(schema_type(spec))
            if ptype is None:
                if prop in needed:
                    raise OpenAPIProblem(
                        f"its body's required field {prop} is {schema_type(spec) or 'untyped'}: "
                        "plugin.toml sends scalar fields only"
                    )
                self.leave_out(f"{label}: body field {prop} ({schema_type(spec) or 'untyped'}): plugin.toml sends scalar fields only")
                continue
            if prop in params:
                self.leave_out(f"{label}: body field {prop}: a parameter has the same name")
                continue
            params[prop] = (ptype, prop in needed)
        if json_type and len(content) > 1:
            others = ", ".join(kind for kind in content if kind != json_type)
            self.notes.append(f"{label}: sent as {json_type} (not {others})")

    def summary(self, operation):
        text = operation.get("summary") or operation.get("description") or ""
        text = " ".join(str(text).split())
        return text[:200]

    def success(self, operation):
        """("json" | "xml" | "text", the JSON schema or None, the response's header names by lower case)."""
        responses = operation.get("responses") or {}
        chosen = None
        for code in ("200", "201", "202", "203", "206", "2XX", "2xx", "default"):
            for key, value in responses.items():
                if str(key) == code:
                    chosen = self.doc.resolve(value)
                    break
            if chosen is not None:
                break
        if not isinstance(chosen, dict):
            return "json", None, {}
        headers = {str(key).lower(): str(key) for key in (chosen.get("headers") or {})}
        content = chosen.get("content") or {}
        if not content:
            return "json", None, headers
        for kind, media in content.items():
            base = kind.split(";")[0].strip().lower()
            if base == "application/json" or base.endswith("+json") or base == "*/*":
                return "json", self.doc.schema((media or {}).get("schema")), headers
        kinds = [kind.split(";")[0].strip().lower() for kind in content]
        if any(kind.endswith("xml") for kind in kinds):
            return "xml", None, headers
        return "text", None, headers

    # -- lists and paging

    def find_list(self, endpoint, schema, headers, query_names):
        kind = schema_type(schema)
        if kind == "array":
            path = ""
        elif kind == "object":
            path = self.array_path(schema, 0)
            if path is None:
                return
        else:
            return
        endpoint["list"] = True
        endpoint["result"] = path
        endpoint["paging"] = self.paging(endpoint, schema, headers, query_names)

    def array_path(self, schema, depth):
        properties = schema.get("properties") or {}
        arrays = []
        for prop, spec in properties.items():
            spec = self.safe_schema(spec)
            if schema_type(spec) == "array":
                arrays.append(prop)
        named = [prop for prop in arrays if prop.lower() in LIST_PROPS]
        envelope = len(arrays) == 1 and (len(properties) <= 3 or self.has_paging_property(schema))
        if named or envelope:
            return (named or arrays)[0]
        if depth < 2:
            for prop, spec in properties.items():
                spec = self.safe_schema(spec)
                if schema_type(spec) == "object" and (prop.lower() in LIST_PROPS or len(properties) <= 3):
                    inner = self.array_path(spec, depth + 1)
                    if inner is not None:
                        return f"{prop}.{inner}"
        return None

    def has_paging_property(self, schema):
        names = {key for key, _ in self.property_paths(schema, 0)}
        return any(name.split(".")[-1].lower() in CURSOR_PROPS + TOTAL_PROPS + NEXT_URL_PROPS for name in names)

    def safe_schema(self, spec):
        """A property's schema, or {} when its $ref cannot be followed (it is only looked at)."""
        try:
            return self.doc.schema(spec)
        except OpenAPIProblem:
            return {}

    def property_paths(self, schema, depth):
        """(dotted path, schema) of every property to two levels."""
        found = []
        for prop, spec in (schema.get("properties") or {}).items():
            spec = self.safe_schema(spec)
            found.append((prop, spec))
            if depth < 2 and schema_type(spec) == "object":
                found += [(f"{prop}.{inner}", value) for inner, value in self.property_paths(spec, depth + 1)]
        return found

    def paging(self, endpoint, schema, headers, query_names):
        lowered = {name.lower(): name for name in query_names}
        props = self.property_paths(schema, 0) if schema_type(schema) == "object" else []
        cursor_param = next((lowered[name] for name in CURSOR_PARAMS if name in lowered), None)
        if cursor_param:
            for path, spec in props:
                if path.split(".")[-1].lower() in CURSOR_PROPS and schema_type(spec) in ("string", None, "integer"):
                    return {"kind": "cursor", "path": path, "param": cursor_param}
            for header in headers:
                if "cursor" in header or "token" in header or "continuation" in header:
                    return {"kind": "header_cursor", "header": headers[header], "param": cursor_param}
        if "link" in headers:
            return {"kind": "link_header"}
        for path, spec in props:
            leaf = path.split(".")[-1].lower()
            if leaf in NEXT_URL_PROPS and schema_type(spec) in ("string", None):
                if leaf != "next" or spec.get("format") in ("uri", "url") or "." in path:
                    return {"kind": "next_url", "path": path}
        offset = next((lowered[name] for name in OFFSET_PARAMS if name in lowered), None)
        if offset:
            table = {"kind": "offset", "param": offset}
            limit = next((lowered[name] for name in LIMIT_PARAMS if name in lowered), None)
            if limit:
                table["limit_param"] = limit
            for path, spec in props:
                if path.split(".")[-1].lower() in TOTAL_PROPS and schema_type(spec) == "integer":
                    table["total"] = path
                    break
            return table
        page = next((lowered[name] for name in PAGE_PARAMS if name in lowered), None)
        if page:
            return {"kind": "page_param", "param": page, "first": 1}
        return None

    def choose_pagination(self):
        lists = [endpoint for endpoint in self.endpoints if endpoint["list"]]
        counts = {}
        for endpoint in lists:
            if endpoint["paging"]:
                key = json.dumps(endpoint["paging"], sort_keys=True)
                counts[key] = counts.get(key, 0) + 1
        if not counts:
            return None
        best = max(counts, key=lambda key: (counts[key], -PAGING_KINDS.index(json.loads(key)["kind"])))
        loaded = json.loads(best)
        order = ("kind", "path", "header", "param", "limit_param", "limit", "total", "first")
        chosen = {key: loaded[key] for key in sorted(loaded, key=order.index)}
        if chosen["kind"] == "offset" and chosen.get("limit_param"):
            # A page size sent with every page: a page shorter than it ends the list.
            for endpoint in lists:
                if endpoint["paging"] == loaded:
                    spec = endpoint["schemas"].get(chosen["limit_param"]) or {}
                    size = spec.get("default", spec.get("maximum"))
                    if isinstance(size, int) and not isinstance(size, bool) and size >= 1:
                        chosen["limit"] = size
                        chosen = {key: chosen[key] for key in sorted(chosen, key=order.index)}
                        break
        counting = chosen["kind"] in ("offset", "page_param") and "limit" not in chosen
        for endpoint in lists:
            if not endpoint["paging"]:
                if counting and endpoint["result"]:
                    # It would be asked for page after page of what the API does not page.
                    endpoint["list"] = False
                    self.notes.append(
                        f"{endpoint['name']} returns a list with no paging of its own: it returns the whole "
                        f"answer (the list is its {endpoint['result']}), as plugin.toml's pagination "
                        f"({describe_paging(chosen)}) would ask it for pages it does not have"
                    )
                    endpoint["result"] = ""
                elif counting:
                    self.notes.append(
                        f"{endpoint['name']} returns a list with no paging of its own, and plugin.toml's pagination "
                        f"({describe_paging(chosen)}) asks for one more page after each: give limit= when you "
                        "iterate it"
                    )
                else:
                    self.notes.append(
                        f"{endpoint['name']} returns a list with no paging of its own; plugin.toml's pagination "
                        f"({describe_paging(chosen)}) applies to it too and ends at its first page"
                    )
            elif json.dumps(endpoint["paging"], sort_keys=True) != best:
                self.notes.append(
                    f"{endpoint['name']} pages by {describe_paging(endpoint['paging'])}, but plugin.toml has one "
                    f"pagination ({describe_paging(chosen)}): it reads its first page only; page it yourself with "
                    "its parameters or .paginate()"
                )
        return chosen

    def free_limit(self):
        """A list endpoint's own ``limit`` parameter (the page size) is left out, so that ``limit=``
        stays the number of items to read, as on every client."""
        for endpoint in self.endpoints:
            if endpoint["list"] and "limit" in endpoint["params"] and not endpoint["params"]["limit"][1]:
                del endpoint["params"]["limit"]
                self.notes.append(
                    f"{endpoint['name']}: its limit parameter (the page size) is left out so that limit= "
                    "stops the iteration; the API's default page size applies"
                )


def describe_paging(paging):
    kind = paging["kind"]
    if kind == "cursor":
        return f"a body cursor ({paging['path']} sent back as {paging['param']})"
    if kind == "header_cursor":
        return f"a header cursor ({paging['header']} sent back as {paging['param']})"
    if kind == "link_header":
        return "the Link header"
    if kind == "next_url":
        return f"a next URL ({paging['path']})"
    if kind == "offset":
        return f"offset paging (the {paging['param']} parameter)"
    return f"page numbers (the {paging['param']} parameter)"


# -- writing --------------------------------------------------------------------------------


def toml_string(text):
    escaped = []
    for char in str(text):
        if char == "\\":
            escaped.append("\\\\")
        elif char == '"':
            escaped.append('\\"')
        elif char == "\n":
            escaped.append("\\n")
        elif char == "\t":
            escaped.append("\\t")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04x}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def toml_key(key):
    return key if re.match(r"^[A-Za-z0-9_-]+$", key) else toml_string(key)


def inline_table(table):
    parts = []
    for key, value in table.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        else:
            text = toml_string(value)
        parts.append(f"{toml_key(key)} = {text}")
    return "{ " + ", ".join(parts) + " }"


def manifest_text(mapper, title, base_url, auth, pagination):
    lines = [
        f"# Made by apimacro plugins new {mapper.name} --from-openapi {mapper.source}",
        "# Check it with apimacro plugins show " + mapper.name + "; edit it freely.",
        f"name = {toml_string(mapper.name)}",
        f"description = {toml_string(title)}",
        f"base_url = {toml_string(base_url)}",
    ]
    if auth["kind"] != "none":
        lines.append(f"auth = {inline_table(auth)}")
    if pagination:
        lines.append(f"pagination = {inline_table(pagination)}")
    for endpoint in mapper.endpoints:
        lines.append("")
        lines.append(f"[endpoints.{endpoint['name']}]")
        if endpoint["summary"]:
            lines.append(f"description = {toml_string(endpoint['summary'])}")
        if endpoint["method"] != "GET":
            lines.append(f"method = {toml_string(endpoint['method'])}")
        lines.append(f"path = {toml_string(endpoint['path'])}")
        if endpoint["params"]:
            params = {key: ptype + ("!" if required else "") for key, (ptype, required) in endpoint["params"].items()}
            lines.append(f"params = {inline_table(params)}")
        if endpoint["list"] and endpoint["result"]:
            lines.append(f"result = {toml_string(endpoint['result'])}")
        if endpoint["response"] != "json":
            lines.append(f"response = {toml_string(endpoint['response'])}")
    return "\n".join(lines) + "\n"


def class_name(name):
    return "".join(part.capitalize() for part in name.split("_")) + "Client"


def stub_text(mapper, title):
    cls = class_name(mapper.name)
    lines = [
        f'"""Type stub of the {mapper.name} plugin\'s client ({title}), made by apimacro plugins new.',
        "",
        f"In a macro, with ``if typing.TYPE_CHECKING: import {mapper.name}``:",
        f"``client = typing.cast(\"{mapper.name}.{cls}\", apimacro.client(\"{mapper.name}\"))``; give the type",
        "checker this folder (MYPYPATH, pyright's stubPath) beside apimacro's own stubs.",
        '"""',
        "",
        "from typing import Any",
        "",
        "from apimacro import PageIterator, PluginClient",
        "",
        "",
        f"class {cls}(PluginClient):",
        f'    """{title}"""',
        "",
    ]
    for endpoint in mapper.endpoints:
        required = [(k, t) for k, (t, r) in endpoint["params"].items() if r]
        optional = [(k, t) for k, (t, r) in endpoint["params"].items() if not r]
        named = [(k, t) for k, t in required + optional if k.isidentifier() and not keyword.iskeyword(k)]
        odd = len(named) < len(endpoint["params"])
        args = ["self"]
        for key, ptype in required:
            if (key, ptype) in named:
                args.append(f"{key}: {PY_TYPES[ptype]}")
        if optional or endpoint["list"] or odd:
            args.append("*")
        for key, ptype in optional:
            if (key, ptype) in named:
                args.append(f"{key}: {PY_TYPES[ptype]} | None = None")
        if endpoint["list"] and "limit" not in endpoint["params"]:
            args.append("limit: int | None = None")
        if odd:
            args.append("**params: str | int | float | bool | None")
        if args[-1] == "*":
            args.pop()
        returns = "PageIterator[Any]" if endpoint["list"] else "Any"
        lines.append(f"    def {endpoint['name']}({', '.join(args)}) -> {returns}:")
        doc = (endpoint["summary"] or endpoint["label"]).replace('"""', "'''").replace("\\", "\\\\")
        lines.append(f'        """{endpoint["method"]} {endpoint["path"]}: {doc}"""')
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def smoke_macro(mapper):
    gets = [endpoint for endpoint in mapper.endpoints if endpoint["method"] == "GET"]

    def needs(endpoint):
        return [(k, t) for k, (t, r) in endpoint["params"].items() if r]

    chosen = (
        next((e for e in gets if e["list"] and e["paging"] and not needs(e)), None)
        or next((e for e in gets if e["list"] and not needs(e)), None)
        or next((e for e in gets if not needs(e)), None)
        or next((e for e in gets if all(k.isidentifier() and not keyword.iskeyword(k) for k, _ in needs(e))), None)
    )
    header = [
        f'"""Smoke test of the {mapper.name} plugin (made by apimacro plugins new): one call, its answer printed."""',
        "import itertools",
        "",
        "import apimacro",
        "",
        "",
    ]
    if chosen is None:
        return "\n".join(header + [
            "def main() -> None:",
            f'    """Lists the endpoints of {mapper.name} (it has no GET to call without a body)."""',
            f'    client = apimacro.client("{mapper.name}")',
            '    apimacro.output([{"endpoint": name} for name in client.endpoints])',
        ]) + "\n", None
    required = needs(chosen)
    params = ", ".join(f"{key}: {PY_TYPES[ptype]}" for key, ptype in required)
    signature = ", ".join(([params] if params else []) + (["limit: int = 3"] if chosen["list"] else []))
    call_args = ", ".join(f"{key}={key}" for key, _ in required)
    body = [
        f"def main({signature}) -> None:",
        f'    """Calls {chosen["name"]} ({chosen["method"]} {chosen["path"]}) and prints '
        + ("up to LIMIT items." if chosen["list"] else "the answer.") + '"""',
        f'    client = apimacro.client("{mapper.name}")',
        f"    answer = client.{chosen['name']}({call_args})",
    ]
    if chosen["list"]:
        body += [
            "    rows = [item if isinstance(item, dict) else {\"value\": item} for item in itertools.islice(answer, limit)]",
            "    apimacro.output(rows)",
        ]
    else:
        body += [
            "    apimacro.output([answer] if isinstance(answer, dict) else [{\"value\": answer}])",
        ]
    return "\n".join(header + body) + "\n", chosen["name"]


def generate(name, source, base_url=None):
    """The plugin ``name`` from the OpenAPI document at ``source`` (a file or an http(s) URL).

    Returns a dict: ``files`` (relative path → text), ``left_out`` and ``notes`` (lines),
    ``endpoints``, ``auth``, ``pagination``, ``macro``; or ``error`` (a message saying what to do)
    when the document cannot be used.
    """
    try:
        text, source_url = read_source(source)
        document = parse(text, source)
        check_version(document, source)
        mapper = Mapper(name, document, source, source_url, base_url)
        resolved_base = mapper.base_url()
        auth, scheme = mapper.auth()
        auth_names = set()
        if auth.get("kind") == "header_key":
            auth_names.add(auth["header"])
        if auth.get("kind") == "query_key":
            auth_names.add(auth["param"])
        mapper.map_operations(auth_names)
        if not mapper.endpoints and not mapper.left_out:
            raise OpenAPIProblem(f"{source}: its paths hold no operation (get, post, put, patch, delete)")
        if not mapper.endpoints:
            raise OpenAPIProblem(
                f"{source}: no operation could be mapped onto plugin.toml:\n  - " + "\n  - ".join(mapper.left_out)
            )
        pagination = mapper.choose_pagination()
        mapper.free_limit()
    except OpenAPIProblem as problem:
        return {"error": str(problem)}
    except (AttributeError, TypeError, KeyError, ValueError) as error:
        return {
            "error": f"{source}: part of the document is not shaped as OpenAPI 3 says ({type(error).__name__}: "
            f"{error}); check it with an OpenAPI validator (e.g. npx @redocly/cli lint FILE)"
        }
    info = document.get("info") or {}
    title = " ".join(str(info.get("title") or name).split())
    if info.get("version"):
        title += f" {info['version']}"
    title += " (from OpenAPI)"
    macro, called = smoke_macro(mapper)
    macro_name = f"{name}-smoke"
    files = {
        "plugin.toml": manifest_text(mapper, title, resolved_base, auth, pagination),
        f"{name}.pyi": stub_text(mapper, title),
        f"macros/{macro_name}.py": macro,
    }
    return {
        "files": files,
        "left_out": mapper.left_out,
        "notes": mapper.notes,
        "endpoints": [
            {
                "name": e["name"], "method": e["method"], "path": e["path"],
                "paging": describe_paging(e["paging"]) if e["paging"] else ("one page" if e["list"] else ""),
            }
            for e in mapper.endpoints
        ],
        "auth": auth["kind"] + (f" (security scheme {scheme})" if scheme else ""),
        "pagination": describe_paging(pagination) if pagination else "none",
        "macro": macro_name,
        "macro_calls": called,
        "base_url": resolved_base,
    }
