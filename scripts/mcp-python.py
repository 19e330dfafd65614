"""`switchyard mcp` driven by the official MCP Python SDK (`mcp` from PyPI), over stdio and
streamable HTTP: initialize, tools/list, a read and a keyed write retried with its key, the
read-only mark announced with notifications/tools/list_changed, and a clean close (no
"Session termination failed" from the SDK). Run by `make test-mcp-python` with the SDK from
.tools/mcp-python (scripts/setup.sh); argv[1] is the `switchyard` binary.

No control plane is needed: reads answer from the console's cache and a write stays
`pending` (the profile points at a closed port)."""

import asyncio
import logging
import os
import socket
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BIN = sys.argv[1]
TOKEN = "python-sdk-bearer-token-0123456789"


class Warnings(logging.Handler):
    """Every warning the SDK logs."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def switchyard(data, *args, stdin=None):
    out = subprocess.run([BIN, "--data-dir", data, *args], input=stdin, text=True,
                         capture_output=True, check=False)
    assert out.returncode == 0, out.stderr
    return out


def method_of(message):
    root = getattr(message, "root", message)
    return getattr(root, "method", None)


async def session_checks(session, data, changed):
    init = await session.initialize()
    assert init.server_info.name == "switchyard", init
    assert init.capabilities.tools.list_changed is True, init.capabilities
    assert "mode: writes" in init.instructions, init.instructions
    names = {t.name for t in (await session.list_tools()).tools}
    assert {"list_resources", "create_resource"} <= names, names
    assert "delete_resource" not in names, names

    listed = await session.call_tool("list_resources", {"kind": "endpoint"})
    assert not listed.is_error, listed
    args = {"request_key": "py-sdk-1", "kind": "endpoint", "name": "orders",
            "spec": {"description": "Orders"}, "wait_seconds": 0}
    first = await session.call_tool("create_resource", args)
    assert not first.is_error, first
    assert first.structured_content["state"] == "pending", first.structured_content
    again = await session.call_tool("create_resource", args)
    assert again.structured_content["replayed"] is True, again.structured_content
    status = await session.call_tool("outbox_status", {"request_key": "py-sdk-1"})
    assert not status.is_error, status
    bad = await session.call_tool("create_resource", {**args, "name": "Not A Name"})
    assert bad.is_error, bad

    # The operator marks the profile read-only for agents: the host is told, the list shrinks.
    switchyard(data, "profile", "agents", "p", "--read-only")
    await asyncio.wait_for(changed.wait(), 15)
    names = {t.name for t in (await session.list_tools()).tools}
    assert "create_resource" not in names, names
    switchyard(data, "profile", "agents", "p", "--allow-writes")


def handler_for(changed):
    async def on_message(message):
        if method_of(message) == "notifications/tools/list_changed":
            changed.set()
    return on_message


async def over_stdio(data):
    params = StdioServerParameters(
        command=BIN, args=["--data-dir", data, "--profile", "p", "mcp", "--allow-writes"])
    changed = asyncio.Event()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=handler_for(changed)) as session:
            await session_checks(session, data, changed)
    print("stdio: ok")


async def over_http(data):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token_file = os.path.join(data, "mcp-token")
    with open(token_file, "w") as f:
        f.write(TOKEN)
    server = subprocess.Popen(
        [BIN, "--data-dir", data, "--profile", "p", "mcp", "--allow-writes",
         "--http", f"127.0.0.1:{port}", "--token-file", token_file],
        stderr=subprocess.PIPE, text=True)
    try:
        assert "serving MCP at" in server.stderr.readline()
        url = f"http://127.0.0.1:{port}/mcp"
        changed = asyncio.Event()
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with http:
            async with streamable_http_client(url, http_client=http) as (read, write, *_):
                async with ClientSession(read, write,
                                         message_handler=handler_for(changed)) as session:
                    await session_checks(session, data, changed)
    finally:
        server.terminate()
        server.wait(10)
    print("http: ok")


async def main():
    warnings = Warnings()
    logging.getLogger("mcp").addHandler(warnings)
    with tempfile.TemporaryDirectory() as d:
        for name, run in [("stdio", over_stdio), ("http", over_http)]:
            data = os.path.join(d, name)
            switchyard(data, "profile", "add", "p", "--url", "http://127.0.0.1:9",
                       "--token-stdin", stdin="a-token-nobody-checks-0123")
            await run(data)
    termination = [w for w in warnings.lines if "termination" in w.lower()]
    assert not termination, termination
    print("2 passed, 0 failed")


asyncio.run(main())
