"""Drives `warden serve --mcp` with the official Python `mcp` client (over stdio).

Usage: client_test.py WARDEN_BINARY REPO_ROOT

Checks: the tools listed per policy; `exec` runs and reports; `edit_file` edits (and says how
many matches when the snippet is not unique); a deny comes back with its rule; paths outside the
workspace are refused; `ask` goes to the client as an elicitation when it can be asked, and is
refused when it cannot; every structuredContent validates against the tool's outputSchema
(the client validates it too). Prints one line per check and a count; exits non-zero on failure.
"""

import asyncio
import os
import subprocess
import sys
import tempfile

import jsonschema
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
import httpx2

PASSED = []


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError(f"{name}: {detail}")
    PASSED.append(name)
    print(f"ok   {name}")


def server(warden, policy, workspace, home):
    return StdioServerParameters(
        command=warden,
        args=["serve", "--mcp", "--policy", policy, "--workspace", workspace],
        env={"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"), "PATH": "/usr/bin:/bin"},
        cwd=workspace,
    )


async def call(session, tools, name, args):
    """Calls a tool and validates its structured content against the listed output schema."""
    result = await session.call_tool(name, args)
    schema = tools[name].output_schema
    check(f"{name} declares an output schema", schema is not None)
    jsonschema.validate(result.structured_content, schema)
    check(f"{name} structuredContent matches its output schema", True)
    return result


def text(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def full_auto(warden, repo, ws, home):
    policy = os.path.join(repo, "policies", "full-auto.policy")
    async with stdio_client(server(warden, policy, ws, home)) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            listed = (await s.list_tools()).tools
            tools = {t.name: t for t in listed}
            want = {"read_file", "list_dir", "search", "write_file", "edit_file", "exec", "explain"}
            check("full-auto lists every tool", set(tools) == want, sorted(tools))

            res = await call(s, tools, "exec", {"command": "echo hello; cat notes.txt"})
            sc = res.structured_content
            check("exec ran", sc["ran"] is True and sc["exit_code"] == 0, sc)
            check("exec stdout", sc["stdout"]["text"] == "hello\nold line\nold line\n", sc["stdout"])
            check("exec sandbox is native", sc["sandbox"]["backend"] == "native", sc["sandbox"])
            check("exec summary names the exit", text(res).startswith("exit 0"), text(res))

            res = await call(s, tools, "exec", {"argv": ["sh", "-c", "exit 3"]})
            check("exec argv passes the exit code", res.structured_content["exit_code"] == 3, res.structured_content)

            res = await call(s, tools, "exec", {"command": "rm notes.txt"})
            sc = res.structured_content
            rule = sc["decision"]["rules"][0]
            check("rm is denied", sc["decision"]["verdict"] == "deny" and sc["ran"] is False, sc["decision"])
            check("the deny names its rule", rule["text"] == "exec rm" and rule["file"].endswith("full-auto.policy") and rule["line"] > 0, rule)
            check("the deny is an error result", res.is_error is True)
            check("the deny summary names the rule", "exec rm" in text(res), text(res))
            check("the denied file is still there", os.path.exists(os.path.join(ws, "notes.txt")))

            res = await call(s, tools, "edit_file", {"path": "notes.txt", "old": "old line", "new": "new line"})
            check("a snippet found twice is refused", res.is_error and "occurs 2 times" in res.structured_content["error"], res.structured_content)
            res = await call(s, tools, "write_file", {"path": "src/lib.rs", "content": "fn a() {}\nfn b() {}\n"})
            check("write_file creates", res.structured_content["ok"] and res.structured_content["result"]["created"], res.structured_content)
            res = await call(s, tools, "edit_file", {"path": "src/lib.rs", "old": "fn b() {}", "new": "fn b() { a() }"})
            check("edit_file edits", res.structured_content["ok"], res.structured_content)
            with open(os.path.join(ws, "src", "lib.rs")) as f:
                check("the edit is on disk", f.read() == "fn a() {}\nfn b() { a() }\n")
            res = await call(s, tools, "edit_file", {"path": "src/lib.rs", "old": "fn c", "new": "x"})
            check("an absent snippet is refused", res.is_error and "not found" in res.structured_content["error"], res.structured_content)

            res = await call(s, tools, "read_file", {"path": "src/lib.rs", "start_line": 2, "end_line": 2})
            r = res.structured_content["result"]
            check("read_file reads a line range", r["content"] == "fn b() { a() }\n" and r["total_lines"] == 2, r)
            res = await call(s, tools, "read_file", {"path": "../../etc/passwd"})
            check("a path outside the workspace is refused", res.is_error and "outside the workspace" in res.structured_content["error"], res.structured_content)
            res = await call(s, tools, "list_dir", {})
            names = [e["name"] for e in res.structured_content["result"]["entries"]]
            check("list_dir lists", names == [".gitignore", "build", "notes.txt", "src"], names)
            res = await call(s, tools, "search", {"pattern": "fn [ab]"})
            hits = [(m["path"], m["line"]) for m in res.structured_content["result"]["matches"]]
            check("search finds, skipping .gitignored files", hits == [("src/lib.rs", 1), ("src/lib.rs", 2)], hits)
            # A link the sandboxed `exec` can make: the file tools, which act on the host, are
            # decided (and act) where it leads, never on the name it was given.
            with open(os.path.join(ws, ".env"), "w") as f:
                f.write("SECRET=1\n")
            code = "import os; os.symlink('src', 'lk'); os.symlink('.env', 'e')"
            res = await call(s, tools, "exec", {"argv": ["python3", "-c", code]})
            check("exec made the links", res.structured_content["ran"] is True and os.path.islink(os.path.join(ws, "e")), res.structured_content)
            res = await call(s, tools, "read_file", {"path": "e"})
            check("read_file through a link to .env is denied", res.is_error and "SECRET" not in text(res), res.structured_content)
            res = await call(s, tools, "write_file", {"path": "lk/x.rs", "content": "x"})
            check("write_file through a link writes where it leads", res.structured_content["ok"] and os.path.isfile(os.path.join(ws, "src", "x.rs")), res.structured_content)
            check("the result names the real path", res.structured_content["result"]["path"] == "src/x.rs", res.structured_content)
            os.remove(os.path.join(ws, "src", "x.rs"))
            res = await call(s, tools, "explain", {"command": "git push"})
            check("explain says deny and runs nothing", res.structured_content["decision"]["verdict"] == "deny" and res.structured_content["ran"] is False)

            try:
                await s.call_tool("read_file", {"path": 5})
                check("a wrong argument type is a JSON-RPC error", False, "no error")
            except Exception as e:  # noqa: BLE001: the client raises its own error type
                check("a wrong argument type is a JSON-RPC error", "invalid arguments" in str(e), str(e))
            res = await call(s, tools, "exec", {"command": "true"})
            check("the server goes on serving after an error", res.structured_content["exit_code"] == 0)


async def asking(warden, repo, ws, home):
    policy = os.path.join(repo, "policies", "default.policy")
    asked = []

    async def approve(ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "approve once"})

    async with stdio_client(server(warden, policy, ws, home)) as (r, w):
        async with ClientSession(r, w, elicitation_callback=approve) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            res = await call(s, tools, "write_file", {"path": "asked.txt", "content": "yes\n"})
            check("ask goes to the client as an elicitation", len(asked) == 1 and "needs approval" in asked[0], asked)
            check("an approved ask runs", res.structured_content["ok"] and os.path.exists(os.path.join(ws, "asked.txt")), res.structured_content)

    async with stdio_client(server(warden, policy, ws, home)) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            res = await call(s, tools, "write_file", {"path": "unasked.txt", "content": "no\n"})
            err = res.structured_content.get("error", "")
            check("ask without elicitation is refused clearly", res.is_error and "cannot be asked" in err, res.structured_content)
            check("the refused write did not happen", not os.path.exists(os.path.join(ws, "unasked.txt")))


async def readonly(warden, repo, ws, home):
    policy = os.path.join(repo, "policies", "readonly.policy")
    async with stdio_client(server(warden, policy, ws, home)) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            check("tools denied outright are not listed", "write_file" not in names and "edit_file" not in names and "read_file" in names, sorted(names))
            try:
                await s.call_tool("write_file", {"path": "x.txt", "content": "x"})
                check("calling a hidden tool is refused", False, "no error")
            except Exception as e:  # noqa: BLE001
                check("calling a hidden tool is refused", "denied to this agent" in str(e), str(e))
            check("the hidden tool wrote nothing", not os.path.exists(os.path.join(ws, "x.txt")))


async def over_http(warden, repo, ws, home):
    """Streamable HTTP with a bearer token: the tools, an exec, and an ask approved by elicitation."""
    token = os.path.join(home, "token")
    with open(os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write("py-client-token\n")
    policy = os.path.join(repo, "policies", "default.policy")
    env = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"), "PATH": "/usr/bin:/bin"}
    args = [warden, "serve", "--mcp", "--no-reload", "--policy", policy, "--workspace", ws, "--http", "127.0.0.1:0", "--token-file", token]
    proc = subprocess.Popen(args, env=env, cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        url = line.strip().removeprefix("warden: serving MCP at ")
        check("the HTTP server says where it listens", url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), line)
        asked = []

        async def approve(ctx, params):
            asked.append(params.message)
            return types.ElicitResult(action="accept", content={"answer": "approve once"})

        client = httpx2.AsyncClient(headers={"Authorization": "Bearer py-client-token"})
        async with streamable_http_client(url, http_client=client) as (r, w):
            async with ClientSession(r, w, elicitation_callback=approve) as s:
                await s.initialize()
                tools = {t.name: t for t in (await s.list_tools()).tools}
                check("HTTP lists every tool", len(tools) == 7, sorted(tools))
                res = await call(s, tools, "exec", {"command": "echo over http"})
                check("HTTP exec runs", res.structured_content["stdout"]["text"] == "over http\n", res.structured_content)
                res = await call(s, tools, "write_file", {"path": "http.txt", "content": "via http\n"})
                check("HTTP ask goes to the client and runs when approved", len(asked) == 1 and res.structured_content["ok"], res.structured_content)
        denied = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Accept": "application/json, text/event-stream"})
        check("HTTP without the token gets 401", denied.status_code == 401, denied.status_code)
    finally:
        proc.kill()
        proc.wait()


async def main():
    warden, repo = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="warden-mcp-py-") as tmp:
        ws, home = os.path.join(tmp, "ws"), os.path.join(tmp, "home")
        os.makedirs(os.path.join(ws, "build"))
        os.makedirs(home)
        with open(os.path.join(ws, "notes.txt"), "w") as f:
            f.write("old line\nold line\n")
        with open(os.path.join(ws, ".gitignore"), "w") as f:
            f.write("build/\n")
        with open(os.path.join(ws, "build", "gen.rs"), "w") as f:
            f.write("fn a() {}\n")
        await full_auto(warden, repo, ws, home)
        await asking(warden, repo, ws, home)
        await readonly(warden, repo, ws, home)
        await over_http(warden, repo, ws, home)
    print(f"client_test: {len(PASSED)} checks passed")


if __name__ == "__main__":
    asyncio.run(main())
