import Platform
import WebAPI

/// The HTML report: one self-contained page (inline CSS and JavaScript, a Content-Security-Policy
/// that allows no network), the report's data in a JSON `<script>` block the page's script draws
/// from, with text only ever set as text (never parsed as HTML).
///
/// Each job shows its outcome, checks, output and a request waterfall as a browser's devtools
/// draws one: per exchange, a bar (an HTML element, its URL in its row's text and its title) made
/// of the phases queueing, rate-limit or pace wait, retries, other blocking, DNS, connect, TLS,
/// send, waiting for the first byte and download, in proportion to their times. Cache hits, 304s
/// and replayed answers say so in text. A row opens its details (method, URL, status, headers as
/// the HAR redacted them, timings). Only the rows in view exist in the page, so 10,000 exchanges
/// scroll as a few do.
enum ReportPage {
    static func html(_ report: Report) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: (try? encoder.encode(report)) ?? Data("{}".utf8), as: UTF8.self)
        // Inside <script>, only "</script" could end the block early: every "<" is escaped.
        let data = json.replacingLiteral("<", with: "\\u003c")
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <link rel="icon" href="data:,">
            <title>\(escape(report.title)) report</title>
            <style>
            \(style)
            </style>
            </head>
            <body>
            <header><h1 id="title">\(escape(report.title))</h1><p id="summary"></p><div id="legend" aria-label="Phases"></div></header>
            <main id="jobs"><noscript>This report draws itself with JavaScript; the same data is in the JSON report (--report out.json).</noscript></main>
            <script type="application/json" id="report-data">\(data)</script>
            <script>
            \(script)
            </script>
            </body>
            </html>

            """
    }

    static func escape(_ text: String) -> String {
        text.replacingLiteral("&", with: "&amp;").replacingLiteral("<", with: "&lt;")
            .replacingLiteral(">", with: "&gt;").replacingLiteral("\"", with: "&quot;")
    }

    static let style = """
        :root { --row: 22px; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #ffffff; --alt: #f6f8fa;
          --queued: #8c959f; --throttled: #bf8700; --retried: #cf222e; --blocked: #d0d7de; --dns: #1a7f37;
          --connect: #e16f24; --ssl: #8250df; --send: #0969da; --wait: #2da44e; --receive: #0550ae; }
        * { box-sizing: border-box; }
        body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 0 1.5rem 2rem; }
        h1 { font-size: 1.4rem; margin: 1rem 0 .25rem; }
        h2 { font-size: 1.1rem; margin: 0; display: flex; gap: .6rem; align-items: baseline; }
        .badge { font-size: .8rem; font-weight: 600; padding: 0 .45rem; border-radius: 1rem; border: 1px solid currentColor; }
        .badge.ok { color: #1a7f37; } .badge.bad { color: #cf222e; } .badge.skip { color: var(--muted); }
        .job { border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin: 1rem 0; }
        .meta { color: var(--muted); margin: .25rem 0 .5rem; }
        .checks { list-style: none; padding: 0; margin: .5rem 0; }
        .checks li { padding: .1rem 0; font-family: ui-monospace, monospace; font-size: 13px; white-space: pre-wrap; word-break: break-word; }
        .check.failed { color: #cf222e; font-weight: 600; } .check.passed { color: #1a7f37; }
        pre { background: var(--alt); padding: .5rem; overflow: auto; max-height: 24rem; margin: .25rem 0; font-size: 12px; }
        details > summary { cursor: pointer; color: var(--muted); }
        #legend { display: flex; flex-wrap: wrap; gap: .25rem 1rem; font-size: 12px; color: var(--muted); margin: .25rem 0; }
        #legend span::before { content: ""; display: inline-block; width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: -1px; background: var(--c); }
        .wf { margin-top: .5rem; }
        .wf-head, .row { display: grid; grid-template-columns: 4.2rem 3.6rem minmax(8rem, 2fr) 9.5rem minmax(12rem, 3fr); align-items: center; height: var(--row); font-size: 12px; }
        .wf-head { color: var(--muted); border-bottom: 1px solid var(--line); }
        .wf-scroll { overflow-y: auto; overflow-x: hidden; position: relative; border-bottom: 1px solid var(--line); }
        .wf-space { position: relative; }
        .row { position: absolute; left: 0; right: 0; cursor: pointer; }
        .row.alt { background: var(--alt); }
        .row:hover, .row:focus, .row.open { background: #ddf4ff; outline: none; }
        .cell { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; padding-right: .4rem; font-family: ui-monospace, monospace; }
        .src { color: var(--muted); }
        .track { position: relative; height: 100%; margin-right: 8px; }
        .bar { position: absolute; top: 5px; height: 12px; display: flex; min-width: 1px; }
        .bar span { height: 100%; background: var(--c); }
        .detail { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; margin: .5rem 0; font-size: 13px; }
        .detail h3 { font-size: 13px; margin: .4rem 0 .2rem; }
        .detail table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 12px; }
        .detail td { padding: 0 .8rem 0 0; vertical-align: top; word-break: break-all; }
        """

    static let script = #"""
        "use strict";
        (function () {
          const report = JSON.parse(document.getElementById("report-data").textContent);
          const ROW = 22, VIEW = 20, SPARE = 15;
          // The phases, in the order devtools draws them; blocked is what the waits leave of it.
          const PHASES = [
            ["queued", "Queueing"], ["throttled", "Rate-limit or pace wait"], ["retried", "Retries"],
            ["blocked", "Blocked (other)"], ["dns", "DNS lookup"], ["connect", "Initial connection"],
            ["ssl", "TLS"], ["send", "Request sent"], ["wait", "Waiting (time to first byte)"],
            ["receive", "Content download"]];
          function el(tag, cls, text) {
            const node = document.createElement(tag);
            if (cls) node.className = cls;
            if (text !== undefined && text !== null) node.textContent = String(text);
            return node;
          }
          function ms(value) { return value < 1000 ? value.toFixed(1) + " ms" : (value / 1000).toFixed(2) + " s"; }
          function phases(x) {
            const t = x.timings, p = (v) => (v > 0 ? v : 0);
            const waits = p(t.queued) + p(t.throttled) + p(t.retried);
            return {
              queued: p(t.queued), throttled: p(t.throttled), retried: p(t.retried),
              blocked: Math.max(0, p(t.blocked) - waits), dns: p(t.dns),
              connect: Math.max(0, p(t.connect) - p(t.ssl)), ssl: p(t.ssl), send: p(t.send),
              wait: p(t.wait), receive: p(t.receive)};
          }
          function marks(x) {
            const words = [];
            if (x.source && x.source !== "network") words.push(x.source);
            else if (x.status === 304) words.push("revalidated (304)");
            if (x.timings.retries > 0) words.push(x.timings.retries + (x.timings.retries === 1 ? " retry" : " retries"));
            return words.join(", ");
          }
          const legend = document.getElementById("legend");
          for (const [key, label] of PHASES) {
            const item = el("span", "", label);
            item.style.setProperty("--c", "var(--" + key + ")");
            legend.appendChild(item);
          }
          const jobs = report.jobs;
          const failed = jobs.filter((j) => !j.passed && j.status !== "not run").length;
          const requests = jobs.reduce((n, j) => n + j.exchanges.length, 0);
          const failedChecks = jobs.reduce((n, j) => n + j.checks.filter((c) => !c.passed).length, 0);
          document.getElementById("summary").textContent =
            jobs.length + (jobs.length === 1 ? " job: " : " jobs: ") + (jobs.length - failed) + " passed, " +
            failed + " failed · " + requests + (requests === 1 ? " exchange" : " exchanges") + " · " +
            failedChecks + (failedChecks === 1 ? " failed check" : " failed checks") + " · " +
            report.seconds.toFixed(2) + " s, started " + report.started;
          const main = document.getElementById("jobs");
          jobs.forEach((job, index) => main.appendChild(drawJob(job, index)));

          function drawJob(job, index) {
            const box = el("section", "job");
            box.id = "job-" + (index + 1);
            const head = el("h2");
            head.appendChild(el("span", "name", job.name));
            const kind = job.passed ? "ok" : job.status === "not run" ? "skip" : "bad";
            head.appendChild(el("span", "badge " + kind, job.passed && job.status === "ok" ? "passed" : job.status));
            box.appendChild(head);
            const facts = [job.macro];
            if (job.exitCode !== null && job.exitCode !== undefined) facts.push("exit " + job.exitCode);
            facts.push(job.seconds.toFixed(2) + " s");
            if (job.requests !== null && job.requests !== undefined) facts.push(job.requests + " requests");
            if (job.cacheHits) facts.push(job.cacheHits + " cache hits");
            box.appendChild(el("p", "meta", facts.join(" · ")));
            if (job.checks.length) {
              const list = el("ul", "checks");
              list.setAttribute("aria-label", "Checks");
              for (const check of job.checks) {
                const word = check.passed ? "✓ passed " : "✗ FAILED ";
                const seen = check.seen !== null && check.seen !== undefined ? " — seen " + check.seen : "";
                list.appendChild(el("li", "check " + (check.passed ? "passed" : "failed"), word + check.name + seen));
              }
              box.appendChild(list);
            }
            for (const stream of ["stdout", "stderr"]) {
              if (!job[stream]) continue;
              const fold = el("details", "output " + stream);
              if (!job.passed) fold.open = true;
              const lines = job[stream].split("\n").filter((l, i, all) => i < all.length - 1 || l).length;
              fold.appendChild(el("summary", "", stream + " (" + lines + (lines === 1 ? " line)" : " lines)")));
              fold.appendChild(el("pre", "", job[stream]));
              box.appendChild(fold);
            }
            if (job.exchanges.length) box.appendChild(drawWaterfall(job));
            return box;
          }

          function drawWaterfall(job) {
            const list = job.exchanges;
            const span = Math.max(1e-6, ...list.map((x) => x.start + x.time));
            const box = el("div", "wf");
            box.setAttribute("role", "table");
            box.setAttribute("aria-label", "Request waterfall of " + job.name);
            const head = el("div", "wf-head");
            for (const title of ["Method", "Status", "URL", "Marked", "Timeline (" + ms(span) + ")"]) head.appendChild(el("span", "cell", title));
            box.appendChild(head);
            const scroll = el("div", "wf-scroll");
            scroll.style.height = Math.min(list.length, VIEW) * ROW + 1 + "px";
            const space = el("div", "wf-space");
            space.style.height = list.length * ROW + "px";
            scroll.appendChild(space);
            box.appendChild(scroll);
            const detail = el("div", "detail");
            detail.hidden = true;
            box.appendChild(detail);
            const shown = new Map();
            let openIndex = -1;
            function row(i) {
              const x = list[i];
              const line = el("div", i % 2 ? "row alt" : "row");
              line.setAttribute("role", "row");
              line.tabIndex = 0;
              line.dataset.index = i;
              line.style.top = i * ROW + "px";
              const mark = marks(x);
              line.title = x.method + " " + x.url + " → " + x.status + (mark ? " (" + mark + ")" : "") + ", " + ms(x.time);
              line.appendChild(el("span", "cell method", x.method));
              line.appendChild(el("span", "cell status", x.status));
              line.appendChild(el("span", "cell url", x.url));
              line.appendChild(el("span", "cell src", mark));
              const track = el("div", "track");
              const bar = el("div", "bar");
              bar.dataset.time = x.time;
              bar.title = x.url;
              bar.style.left = (x.start / span) * 100 + "%";
              bar.style.width = (x.time / span) * 100 + "%";
              const parts = phases(x);
              const total = Object.values(parts).reduce((a, b) => a + b, 0) || 1;
              for (const [key, label] of PHASES) {
                if (!parts[key]) continue;
                const part = el("span", "phase " + key);
                part.style.setProperty("--c", "var(--" + key + ")");
                part.style.width = (parts[key] / total) * 100 + "%";
                part.title = label + ": " + ms(parts[key]);
                bar.appendChild(part);
              }
              track.appendChild(bar);
              line.appendChild(track);
              if (i === openIndex) line.classList.add("open");
              return line;
            }
            function render() {
              const first = Math.max(0, Math.floor(scroll.scrollTop / ROW) - SPARE);
              const last = Math.min(list.length, Math.ceil((scroll.scrollTop + scroll.clientHeight) / ROW) + SPARE);
              for (const [i, node] of shown) if (i < first || i >= last) { node.remove(); shown.delete(i); }
              for (let i = first; i < last; i++) if (!shown.has(i)) { const node = row(i); shown.set(i, node); space.appendChild(node); }
            }
            let pending = false;
            scroll.addEventListener("scroll", () => {
              if (pending) return;
              pending = true;
              requestAnimationFrame(() => { pending = false; render(); });
            });
            function open(i) {
              if (shown.has(openIndex)) shown.get(openIndex).classList.remove("open");
              if (openIndex === i) { openIndex = -1; detail.hidden = true; return; }
              openIndex = i;
              if (shown.has(i)) shown.get(i).classList.add("open");
              showDetail(detail, list[i]);
            }
            space.addEventListener("click", (event) => {
              const line = event.target.closest(".row");
              if (line) open(Number(line.dataset.index));
            });
            space.addEventListener("keydown", (event) => {
              const line = event.target.closest(".row");
              if (line && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); open(Number(line.dataset.index)); }
            });
            render();
            // The first render runs before layout knows the height: once more when it does.
            requestAnimationFrame(render);
            return box;
          }

          function showDetail(detail, x) {
            detail.replaceChildren();
            detail.hidden = false;
            const mark = marks(x);
            detail.appendChild(el("h3", "", x.method + " " + x.url));
            detail.appendChild(el("p", "", "Status " + x.status + (mark ? " · " + mark : " · network") + " · " + ms(x.time) + " · started at " + ms(x.start)));
            const parts = phases(x);
            const table = el("table");
            for (const [key, label] of PHASES) {
              if (!(parts[key] >= 0.05)) continue;
              const tr = el("tr");
              tr.appendChild(el("td", "", label));
              tr.appendChild(el("td", "", ms(parts[key])));
              table.appendChild(tr);
            }
            detail.appendChild(el("h3", "", "Timing"));
            detail.appendChild(table);
            for (const [title, headers] of [["Request headers", x.requestHeaders], ["Response headers", x.responseHeaders]]) {
              detail.appendChild(el("h3", "", title));
              const list = el("table");
              for (const h of headers) {
                const tr = el("tr");
                tr.appendChild(el("td", "", h.name));
                tr.appendChild(el("td", "", h.value));
                list.appendChild(tr);
              }
              detail.appendChild(list);
            }
          }
        })();
        """#
}
