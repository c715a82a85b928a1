/// File paths as text, as `NSString`'s path methods read them (Foundation proper, which brings
/// ICU; FoundationEssentials has only `URL`'s).
public enum PathText {
    /// `path` without its last component, as `NSString.deletingLastPathComponent` gives it:
    /// `/a/b/` → `/a`, `/a` → `/`, `/` → `/`, `a` → ``, `a//b` → `a`.
    public static func deletingLastComponent(_ path: String) -> String {
        var components = path.split(separator: "/")
        let absolute = path.hasPrefix("/")
        guard !components.isEmpty else { return absolute ? "/" : "" }
        components.removeLast()
        let joined = components.joined(separator: "/")
        return absolute ? "/" + joined : joined
    }
}
