import PythonBridge

/// `as_account(label)`, which every client has (built-in and plugins' alike): its arguments and help.
enum AccountBinding {
    /// The help of `client`'s `as_account`.
    static func doc(client: String) -> String {
        """
        as_account(label) -> a client of the same service using the stored account `label`

        The account is one `apimacro login \(client) --account LABEL` stored (apimacro auth status lists
        them); it is used even where a variable such as APIMACRO_\(client.uppercased())_TOKEN is set. Each
        account has its own rate limit, cache entries and -v/HAR label; an unknown label raises AuthError
        naming the accounts stored.
        """
    }

    /// Adds `as_account(label)` to `builder`, with no `cache=` keyword (it sends nothing);
    /// `make` builds the state of the client using the account `label`.
    static func install<State: AnyObject>(
        on builder: NativeClass<State>, client: String, make: @escaping (String) throws -> State
    ) throws {
        let shared = builder.sharedKeyword
        builder.sharedKeyword = nil
        defer { builder.sharedKeyword = shared }
        try builder.method("as_account", doc: doc(client: client)) { _, arguments in
            try builder.instance(make(label(arguments)))
        }
    }

    /// The label `as_account` was given.
    static func label(_ arguments: PyArguments) throws -> String {
        let slots = try arguments.bind("as_account", ["label"], required: 1)
        return try Arguments.string(slots[0], "label", in: "as_account")
    }
}
