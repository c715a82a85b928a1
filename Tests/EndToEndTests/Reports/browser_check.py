"""Loads an HTML report in headless Chromium through the DevTools protocol and says what it saw.

    python3 browser_check.py CHROMIUM PAGE.html [--screenshot OUT.png] [--open-row]
                             [--width N] [--height N]

Chromium runs with --remote-debugging-pipe (the protocol as NUL-separated JSON on fds 3 and 4),
so no port is opened and nothing but the standard library is needed. The page is loaded, two
animation frames are let pass, then one JSON object goes to stdout:

    console: the console errors, uncaught exceptions and log errors, as text
    bars: for each waterfall bar in the page, its exchange's time and its drawn width in pixels
    rows: how many waterfall rows exist in the page
    text: the page's text (document.body.innerText)
    failedChecks: the text of each failed check shown
    details: the text of the details panel after clicking the first row (with --open-row)
    lastRow: after scrolling each waterfall to its end, the URL of the last row in the page,
             and how many rows exist then ({"url": ..., "rows": ...} per waterfall)

Every wait is for an event from the browser, with a 600 s guard against a hang.
"""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import sys
import tempfile
from typing import Any

GUARD = 600.0


class Browser:
    def __init__(self, chromium: str, width: int, height: int) -> None:
        self.profile = tempfile.TemporaryDirectory(prefix="apimacro-chromium-")
        to_child_read, self.to_child = os.pipe()
        self.from_child, from_child_write = os.pipe()

        def wire() -> None:
            # Moved out of the way first: either end may itself be fd 3 or 4.
            reading, writing = os.dup(to_child_read), os.dup(from_child_write)
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        self.process = subprocess.Popen(
            [
                chromium, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-dev-shm-usage",
                f"--user-data-dir={self.profile.name}", f"--window-size={width},{height}", "about:blank",
            ],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4),
        )
        os.close(to_child_read)
        os.close(from_child_write)
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def receive(self) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.from_child], [], [], GUARD)
            if not ready:
                raise TimeoutError("chromium said nothing for 600 s")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method: str) -> dict[str, Any]:
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        while True:
            event = self.receive()
            if event.get("method") == method:
                return event
            self.events.append(event)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            self.process.kill()
        self.process.wait(timeout=GUARD)
        self.profile.cleanup()


def evaluate(browser: Browser, session: str, expression: str) -> Any:
    result = browser.send(
        "Runtime.evaluate",
        {"expression": expression, "returnByValue": True, "awaitPromise": True},
        session,
    )
    if "exceptionDetails" in result:
        raise RuntimeError(f"{expression[:60]}: {result['exceptionDetails']}")
    return result["result"].get("value")


FRAMES = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"

MEASURE = """(() => {
  const bars = [...document.querySelectorAll('.bar')].map(b => ({
    time: Number(b.dataset.time), width: b.getBoundingClientRect().width,
    track: b.parentElement.getBoundingClientRect().width,
    url: b.title, row: b.closest('.row').textContent }));
  return { bars, rows: document.querySelectorAll('.row').length, text: document.body.innerText,
    failedChecks: [...document.querySelectorAll('.check.failed')]
      .filter(c => c.getBoundingClientRect().height > 0).map(c => c.textContent) };
})()"""


def main() -> None:
    arguments = sys.argv[1:]
    chromium, page = arguments[0], os.path.abspath(arguments[1])
    option = lambda name, default: arguments[arguments.index(name) + 1] if name in arguments else default  # noqa: E731
    screenshot = option("--screenshot", None)
    width, height = int(option("--width", "1280")), int(option("--height", "900"))
    browser = Browser(chromium, width, height)
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", {}, session)
        # A page in front and focused draws its animation frames, which the checks wait for.
        browser.send("Page.bringToFront", {}, session)
        browser.send("Emulation.setFocusEmulationEnabled", {"enabled": True}, session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
        browser.send("Page.navigate", {"url": "file://" + page}, session)
        browser.wait_for("Page.loadEventFired")
        evaluate(browser, session, FRAMES)
        seen = evaluate(browser, session, MEASURE)
        if "--open-row" in arguments:
            evaluate(browser, session, "document.querySelector('.row').click(); true")
            evaluate(browser, session, FRAMES)
            seen["details"] = evaluate(
                browser, session, "[...document.querySelectorAll('.detail')].map(d => d.innerText).join('\\n')")
        if screenshot:
            shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False}, session)
            with open(screenshot, "wb") as file:
                file.write(base64.b64decode(shot["data"]))
        last = []
        count = evaluate(browser, session, "document.querySelectorAll('.wf-scroll').length")
        for index in range(count):
            evaluate(
                browser, session,
                f"(() => {{ const s = document.querySelectorAll('.wf-scroll')[{index}]; "
                "s.scrollTop = s.scrollHeight; s.dispatchEvent(new Event('scroll')); return true; })()")
            evaluate(browser, session, FRAMES)
            last.append(evaluate(
                browser, session,
                f"(() => {{ const s = document.querySelectorAll('.wf-scroll')[{index}]; "
                "const rows = [...s.querySelectorAll('.row')]; "
                "const end = rows.reduce((a, r) => Number(r.dataset.index) > Number(a.dataset.index) ? r : a); "
                "return { url: end.querySelector('.url').textContent, index: Number(end.dataset.index), "
                "rows: rows.length }; })()"))
        seen["lastRow"] = last
        console = []
        for event in browser.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                console.append(json.dumps(params.get("exceptionDetails", {}))[:2000])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                console.append(params["entry"].get("text", ""))
        seen["console"] = console
        json.dump(seen, sys.stdout)
    finally:
        browser.close()


if __name__ == "__main__":
    main()
