/// `GET /feed.rss` (RSS 2.0, 3 items) and `GET /feed.atom` (Atom, 2 entries).
struct FeedRoutes: RouteHandler {
    func respond(to request: RouteRequest) -> Response? {
        if request.match("GET", "/feed.rss") != nil {
            return .text(rss(origin: request.origin), contentType: "application/rss+xml; charset=utf-8")
        }
        if request.match("GET", "/feed.atom") != nil {
            return .text(atom(origin: request.origin), contentType: "application/atom+xml; charset=utf-8")
        }
        return nil
    }

    private func rss(origin: String) -> String {
        let items = [
            ("First post", "Mon, 06 Jan 2025 09:00:00 GMT", "Hello &amp; welcome."),
            ("Zoë's café", "Tue, 07 Jan 2025 10:30:00 GMT", "Ünïcødé in a feed."),
            ("Third post", "Wed, 08 Jan 2025 12:00:00 GMT", "<![CDATA[Some <b>bold</b> text.]]>"),
        ]
        let entries = items.enumerated().map { index, item in
            """
                <item>
                  <title>\(item.0)</title>
                  <link>\(origin)/posts/\(index + 1)</link>
                  <guid isPermaLink="false">post-\(index + 1)</guid>
                  <pubDate>\(item.1)</pubDate>
                  <description>\(item.2)</description>
                </item>
            """
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0">
              <channel>
                <title>apimacro test feed</title>
                <link>\(origin)/</link>
                <description>A small RSS 2.0 feed served by the apimacro test server.</description>
                <language>en</language>
            \(entries.joined(separator: "\n"))
              </channel>
            </rss>

            """
    }

    private func atom(origin: String) -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
          <title>apimacro test feed</title>
          <link href="\(origin)/feed.atom" rel="self"/>
          <link href="\(origin)/"/>
          <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
          <updated>2025-01-08T12:00:00Z</updated>
          <author>
            <name>The Octocat</name>
          </author>
          <entry>
            <title>First entry</title>
            <link href="\(origin)/entries/1"/>
            <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
            <updated>2025-01-07T10:30:00Z</updated>
            <summary>Some text.</summary>
          </entry>
          <entry>
            <title>Zoë's second entry</title>
            <link href="\(origin)/entries/2"/>
            <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6b</id>
            <updated>2025-01-08T12:00:00Z</updated>
            <summary>Ünïcødé text.</summary>
          </entry>
        </feed>

        """
    }
}
