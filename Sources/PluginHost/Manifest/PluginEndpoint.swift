/// One `[endpoints.NAME]` of a manifest: a method, a path template, typed
/// parameters and where the payload is in the answer.
public struct PluginEndpoint: Sendable, Equatable {
    /// The method name in Python (`find`).
    public let name: String
    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    public let method: String
    /// The path relative to the base URL, with `{param}` placeholders (`/users/{id}`).
    public let path: String
    /// Parameters: required ones first, then optional ones, each group by name.
    public let parameters: [PluginParameter]
    /// The JSON path of the payload (`list`, `response.venues`); empty for the whole body.
    public let result: [String]
    /// How the body is read.
    public let response: ResponseFormat
    /// One line for the docstring and `plugins show`, if the manifest gives one.
    public let summary: String?
    /// How an error inside a 2xx answer shows (`error_when`, `error_path`), if the API sends them.
    public var answerError: AnswerErrorRule? = nil

    /// The formats `response = "…"` may name.
    public enum ResponseFormat: String, Sendable, CaseIterable {
        case json, xml, text
    }

    /// The names inside `{…}` in the path, in order.
    public static func placeholders(in path: String) -> [String] {
        var names: [String] = []
        var current: String?
        for character in path {
            if character == "{" {
                current = ""
            } else if character == "}", let name = current {
                names.append(name)
                current = nil
            } else if current != nil {
                current?.append(character)
            }
        }
        return names
    }

    /// Whether the body goes as JSON (POST, PUT, PATCH) rather than in the query string.
    public var sendsBody: Bool { ["POST", "PUT", "PATCH"].contains(method) }

    /// `find(q, type=None, cnt=None, limit=None)`: how Python calls it.
    public var signature: String {
        let names = parameters.map { $0.required ? $0.name : "\($0.name)=None" }
        let limit = parameters.contains { $0.name == "limit" } ? [] : ["limit=None"]
        return "\(name)(\((names + limit).joined(separator: ", ")))"
    }

    /// The help text of the method: signature, request, parameters, result.
    public func help(plugin: String) -> String {
        var lines = [signature, ""]
        if let summary { lines.append(summary) }
        lines.append("\(method) \(path) on \(plugin).")
        if !parameters.isEmpty {
            lines.append("")
            lines.append("Parameters:")
            for parameter in parameters {
                let place = parameter.inPath ? "path" : (sendsBody ? "JSON body" : "query")
                lines.append(
                    "  \(parameter.name): \(parameter.type.rawValue)\(parameter.required ? ", required" : ""), in the \(place)"
                )
            }
        }
        lines.append("")
        let payload = result.isEmpty ? "the decoded body" : "the body's \(result.joined(separator: "."))"
        switch response {
        case .json:
            lines.append(
                "Returns \(payload): a dict, or a lazy iterator over every page when it is a list (limit=N stops early)."
            )
        case .xml: lines.append("Returns the body as an xml.etree.ElementTree.Element.")
        case .text: lines.append("Returns the body as str.")
        }
        if let answerError {
            let summary = answerError.summary
            lines.append(summary.prefix(1).uppercased() + summary.dropFirst() + " (raises HTTPError).")
        }
        return lines.joined(separator: "\n")
    }
}

/// A declared parameter: `q = "string!"`.
public struct PluginParameter: Sendable, Equatable {
    /// The name as written in `params` (and as a Python keyword).
    public let name: String
    /// The declared type (`string`, `int`, `float`, `bool`).
    public let type: ParameterType
    /// Written with `!`; path parameters always are.
    public let required: Bool
    /// Whether the path template has `{name}`.
    public let inPath: Bool

    /// The types a parameter may have.
    public enum ParameterType: String, Sendable, CaseIterable {
        case string, int, float, bool
    }
}
