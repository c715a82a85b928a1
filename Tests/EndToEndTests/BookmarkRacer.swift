/// The macro two "machines" run at once to race on one bookmark (the PostgreSQL and the Redis
/// state tests): it reads the bookmark, says so with a file `read-TAG`, waits for `go-TAG`, then
/// advances the bookmark and writes one row.
enum BookmarkRacer {
    /// The macro, writing its row to `destination` (`to=`), or to APIMACRO_DATABASE_URL when nil.
    static func source(to destination: String? = nil) -> String {
        let to = destination.map { "to=\"\($0)\", " } ?? ""
        return """
            import apimacro, os, sys
            tag = sys.argv[1]
            seen = apimacro.state.get("cursor", 0)
            open("read-" + tag, "w").close()
            while not os.path.exists("go-" + tag):
                apimacro.sleep(0.02)
            apimacro.state["cursor"] = seen + 1
            apimacro.state["by"] = tag
            apimacro.output([{"id": seen + 1, "by": tag}], \(to)table="synced", key="id")
            print(tag, seen + 1)

            """
    }
}
