#!/usr/bin/env python3
"""A minimal W3C WebDriver client for the package tests (standard library only).

It talks to WebKitWebDriver directly: the `webkitgtk:browserOptions` capability names the app
to start, which is all tauri-driver would add on Linux. Elements are found by `data-testid`.

    webdriver.py session BINARY           prints the new session's id
    webdriver.py click TESTID             clicks (retrying while it is disabled or moving)
    webdriver.py type TESTID TEXT         replaces an input's text
    webdriver.py wait-text TESTID TEXT    waits until the element's text contains TEXT; prints it
    webdriver.py text TESTID              prints the element's text (empty when absent)
    webdriver.py shot FILE.png            a screenshot of the window
    webdriver.py quit                     ends the session

WD_URL is the driver's address (http://127.0.0.1:PORT); WD_SESSION the session's id;
WD_TIMEOUT the seconds a wait or a click may take (default 60).
"""

import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
TEXT_OF = "const el = document.querySelector(arguments[0]); return el ? el.textContent : null;"


class WebDriverError(Exception):
    pass


def call(method, path, body=None, timeout=60):
    url = os.environ["WD_URL"].rstrip("/") + path
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"{}").get("value")
    except urllib.error.HTTPError as e:
        detail = e.read().decode(errors="replace")
        raise WebDriverError(f"{method} {path}: {e.code} {detail[:300]}") from None


def session_path(suffix=""):
    return f"/session/{os.environ['WD_SESSION']}{suffix}"


def deadline():
    return time.monotonic() + float(os.environ.get("WD_TIMEOUT", "60"))


def selector(testid):
    return f"[data-testid='{testid}']"


def find(testid):
    value = call("POST", session_path("/element"), {"using": "css selector", "value": selector(testid)})
    return value[ELEMENT]


def text_of(testid):
    return call("POST", session_path("/execute/sync"), {"script": TEXT_OF, "args": [selector(testid)]})


def retry(what, action):
    """Runs `action` until it returns without error or the deadline passes."""
    end, last = deadline(), None
    while time.monotonic() < end:
        try:
            return action()
        except (WebDriverError, KeyError, TypeError) as e:
            last = e
            time.sleep(0.3)
    raise WebDriverError(f"{what}: gave up: {last}")


def click(testid):
    def once():
        el = find(testid)
        disabled = call("GET", session_path(f"/element/{el}/attribute/data-disabled"))
        enabled = call("GET", session_path(f"/element/{el}/enabled"))
        if disabled is not None or enabled is False:
            raise WebDriverError(f"{testid} is disabled")
        call("POST", session_path(f"/element/{el}/click"), {})

    retry(f"clicking {testid}", once)


def type_into(testid, text):
    def once():
        el = find(testid)
        call("POST", session_path(f"/element/{el}/clear"), {})
        call("POST", session_path(f"/element/{el}/value"), {"text": text})
        value = call("GET", session_path(f"/element/{el}/property/value"))
        if value != text:
            raise WebDriverError(f"{testid} holds {value!r}, not {text!r}")

    retry(f"typing into {testid}", once)


def wait_text(testid, wanted):
    end, last = deadline(), None
    while time.monotonic() < end:
        last = text_of(testid)
        if last is not None and wanted in last:
            return last
        time.sleep(0.3)
    raise WebDriverError(f"{testid} never read {wanted!r}; last: {last!r}")


def new_session(binary):
    caps = {"capabilities": {"alwaysMatch": {"webkitgtk:browserOptions": {"binary": binary, "args": []}}}}

    def once():
        value = call("POST", "/session", caps, timeout=90)
        return value["sessionId"]

    return retry("opening a session", once)


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "session":
        print(new_session(args[0]))
    elif cmd == "click":
        click(args[0])
    elif cmd == "type":
        type_into(args[0], args[1])
    elif cmd == "wait-text":
        print(wait_text(args[0], args[1]))
    elif cmd == "text":
        print(text_of(args[0]) or "")
    elif cmd == "shot":
        png = call("GET", session_path("/screenshot"))
        with open(args[0], "wb") as f:
            f.write(base64.b64decode(png))
    elif cmd == "quit":
        try:
            call("DELETE", session_path(), timeout=10)
        except (WebDriverError, OSError):
            pass
    else:
        raise SystemExit(f"webdriver.py: unknown command {cmd!r}")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except WebDriverError as e:
        print(f"webdriver: {e}", file=sys.stderr)
        sys.exit(1)
