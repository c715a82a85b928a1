"""Tests for apimacro._openapi, the mapping behind ``apimacro plugins new --from-openapi``.

Small documents written here, each for one rule; the real documents are run through the binary
by OpenAPIPluginTests.
"""

import json
import os
import tempfile
import unittest

from apimacro import _openapi


def document(paths, **extra):
    base = {"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://api.test/v1"}]}
    base["paths"] = paths
    base.update(extra)
    return base


def generate(doc, name="t"):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(doc, handle)
    try:
        return _openapi.generate(name, handle.name)
    finally:
        os.unlink(handle.name)


def listing(parameters, properties, headers=None):
    response = {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": properties}}}}
    if headers:
        response["headers"] = headers
    return {"get": {"operationId": "listThings", "parameters": parameters, "responses": {"200": response}}}


ITEMS = {"type": "array", "items": {"type": "object"}}


def query(name, kind="string"):
    return {"name": name, "in": "query", "schema": {"type": kind}}


class NamesTest(unittest.TestCase):
    def test_yaml_aliases_refused(self):
        # A server's "billion laughs": aliases nested so that a walk never ends; refused at once.
        bomb = "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nopenapi: 3.0.0\n"
        with self.assertRaises(_openapi.OpenAPIProblem) as caught:
            _openapi.parse(bomb, "bomb.yaml")
        self.assertIn("line 2: YAML aliases (*a) are not read", str(caught.exception))
        self.assertEqual(_openapi.parse("openapi: 3.0.0\npaths: {}\n", "ok.yaml"), {"openapi": "3.0.0", "paths": {}})

    def test_snake_case(self):
        self.assertEqual(_openapi.snake("listRepos"), "list_repos")
        self.assertEqual(_openapi.snake("getHTTPStatus"), "get_http_status")
        self.assertEqual(_openapi.snake("app.bsky.actor.getProfile"), "app_bsky_actor_get_profile")
        self.assertEqual(_openapi.snake("get-user"), "get_user")

    def test_reserved_and_unusable_names(self):
        result = generate(document({
            "/a": {"get": {"operationId": "get", "responses": {"200": {"description": "ok"}}}},
            "/b": {"get": {"operationId": "???", "responses": {"200": {"description": "ok"}}}},
        }))
        self.assertIn("[endpoints.get_op]", result["files"]["plugin.toml"])
        self.assertTrue(any("gives no usable name" in line for line in result["left_out"]), result["left_out"])


class PagingTest(unittest.TestCase):
    def pagination(self, parameters, properties, headers=None):
        result = generate(document({"/things": listing(parameters, properties, headers)}))
        toml = result["files"]["plugin.toml"]
        return next((line for line in toml.splitlines() if line.startswith("pagination")), None), toml

    def test_each_kind(self):
        cases = [
            ([query("cursor")], {"data": ITEMS, "meta": {"type": "object", "properties": {"next_cursor": {"type": "string"}}}},
             None, 'pagination = { kind = "cursor", path = "meta.next_cursor", param = "cursor" }'),
            ([query("page_token")], {"items": ITEMS}, {"X-Next-Page-Token": {"schema": {"type": "string"}}},
             'pagination = { kind = "header_cursor", header = "X-Next-Page-Token", param = "page_token" }'),
            ([query("per_page", "integer")], {"items": ITEMS}, {"Link": {"schema": {"type": "string"}}},
             'pagination = { kind = "link_header" }'),
            ([], {"results": ITEMS, "next": {"type": "string", "format": "uri"}}, None,
             'pagination = { kind = "next_url", path = "next" }'),
            ([query("offset", "integer"), query("limit", "integer")], {"items": ITEMS, "total": {"type": "integer"}}, None,
             'pagination = { kind = "offset", param = "offset", limit_param = "limit", total = "total" }'),
            ([query("page", "integer")], {"items": ITEMS}, None, 'pagination = { kind = "page_param", param = "page", first = 1 }'),
        ]
        for parameters, properties, headers, expected in cases:
            with self.subTest(expected=expected):
                line, toml = self.pagination(parameters, properties, headers)
                self.assertEqual(line, expected, toml)

    def test_offset_page_size_from_the_schema_and_unpaged_lists(self):
        limit = {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 20, "maximum": 100}}
        result = generate(document({
            "/things": listing([query("offset", "integer"), limit], {"items": ITEMS}),
            "/tags": {"get": {"operationId": "listTags", "responses": {"200": {"description": "ok", "content": {
                "application/json": {"schema": {"type": "object", "properties": {"tags": ITEMS}}}}}}}},
        }))
        toml = result["files"]["plugin.toml"]
        self.assertIn('pagination = { kind = "offset", param = "offset", limit_param = "limit", limit = 20 }', toml)
        # The page size is the pagination's: list_things keeps offset only, and limit= is the iteration's.
        self.assertIn('params = { offset = "int" }', toml)
        # With a page size a short page ends any list, so the unpaged one stays a list.
        self.assertIn('result = "tags"', toml)

    def test_most_used_kind_wins_and_the_other_is_noted(self):
        result = generate(document({
            "/a": listing([query("page", "integer")], {"items": ITEMS}),
            "/b": {"get": dict(listing([query("page", "integer")], {"items": ITEMS})["get"], operationId="listB")},
            "/c": {"get": dict(listing([query("cursor")], {"items": ITEMS, "next_cursor": {"type": "string"}})["get"], operationId="listC")},
        }))
        self.assertIn('pagination = { kind = "page_param"', result["files"]["plugin.toml"])
        self.assertTrue(any(line.startswith("list_c pages by a body cursor") for line in result["notes"]), result["notes"])


class LeftOutTest(unittest.TestCase):
    def test_multipart_callback_cookie_and_basic_auth(self):
        result = generate(document({
            "/upload": {"post": {"operationId": "upload", "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object"}}}},
                                 "responses": {"200": {"description": "ok"}}}},
            "/hook": {"post": {"operationId": "subscribe", "callbacks": {"onEvent": {}},
                               "parameters": [{"name": "session", "in": "cookie", "schema": {"type": "string"}}],
                               "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["url"],
                                                                                           "properties": {"url": {"type": "string"}}}}}},
                               "responses": {"201": {"description": "ok"}}}},
        }, components={"securitySchemes": {"b": {"type": "http", "scheme": "basic"}}}, security=[{"b": []}]))
        toml = result["files"]["plugin.toml"]
        self.assertIn('auth = { kind = "basic", user_env = "APIMACRO_T_USER", env = "APIMACRO_T_PASSWORD" }', toml)
        self.assertIn("[endpoints.subscribe]", toml)
        self.assertNotIn("[endpoints.upload]", toml)
        self.assertIn('params = { url = "string" }', toml)
        joined = "\n".join(result["left_out"])
        self.assertIn("POST /upload (upload): a multipart upload (multipart/form-data)", joined)
        self.assertIn("callback onEvent: apimacro does not receive the API's requests", joined)
        self.assertIn("cookie parameter session: plugin.toml sends no cookies", joined)

    def test_oauth2_authorization_code_is_bearer_and_said(self):
        result = generate(document(
            {"/me": {"get": {"operationId": "me", "responses": {"200": {"description": "ok"}}}}},
            components={"securitySchemes": {"o": {"type": "oauth2", "flows": {"authorizationCode": {
                "authorizationUrl": "https://a.test/auth", "tokenUrl": "https://a.test/token", "scopes": {}}}}}},
            security=[{"o": []}]))
        self.assertIn('auth = { kind = "bearer", env = "APIMACRO_T_TOKEN" }', result["files"]["plugin.toml"])
        self.assertTrue(any("OAuth2 (authorizationCode) is mapped to bearer" in line for line in result["notes"]))


class ErrorsTest(unittest.TestCase):
    def test_versions_and_syntax(self):
        self.assertIn("Swagger 2.0", generate({"swagger": "2.0", "paths": {}})["error"])
        self.assertIn("no 'openapi: 3.x'", generate({"paths": {}})["error"])
        self.assertIn("has no paths", generate({"openapi": "3.1.0", "paths": {}})["error"])

    def test_no_operation_and_refs_outside_the_document(self):
        self.assertIn("its paths hold no operation", generate(document({"/x": None}))["error"])
        error = generate(document({"/a": {"$ref": "other.yaml#/x"}}))["error"]
        self.assertIn("no operation could be mapped onto plugin.toml", error)
        self.assertIn("/a: $ref 'other.yaml#/x' points outside the document", error)

    def test_server_variables_and_31_types(self):
        doc = document({"/x/{id}": {"get": {"operationId": "x", "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": ["integer", "null"]}}]}}},
            servers=[{"url": "https://{region}.api.test", "variables": {"region": {"default": "eu"}}}])
        toml = generate(doc)["files"]["plugin.toml"]
        self.assertIn('base_url = "https://eu.api.test"', toml)
        self.assertIn('params = { id = "int!" }', toml)


if __name__ == "__main__":
    unittest.main()
