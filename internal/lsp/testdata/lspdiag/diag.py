"""A language server that reports diagnostics, for the tests of an edit's
errors: every line holding ERR is an error ("bad line N: TEXT"). Its first
argument sets its manners:

  push       publishes (with the document's version) on didOpen and didChange
  noversion  the same, without the version
  hold       publishes on didOpen at once; what a didChange makes it publish
             is held until the client's next request, and sent before that
             request is answered (an edit's report pending, then known, at
             a moment the test chooses)
  debounce   the same, keeping only the last held report of a file (as a
             debouncing server skips the texts that a newer one replaced)
  pull       publishes nothing; answers textDocument/diagnostic
  clangd     calls itself clangd, and publishes on didChange only when asked
             to (clangd's wantDiagnostics), as clangd skips its debounce

It answers hover with "ok" and shutdown, and nothing else."""
import json
import sys


def read():
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        key, _, value = line.decode().partition(":")
        headers[key.lower()] = value.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))


def send(msg):
    msg["jsonrpc"] = "2.0"
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def diagnostics(text):
    out = []
    for n, line in enumerate(text.split("\n")):
        if "ERR" in line:
            out.append({"range": {"start": {"line": n, "character": line.index("ERR")}, "end": {"line": n, "character": len(line)}},
                        "severity": 1, "source": "diag", "message": "bad line: " + line.strip()})
    return out


def publish(uri):
    params = {"uri": uri, "diagnostics": diagnostics(docs[uri][1])}
    if mode != "noversion":
        params["version"] = docs[uri][0]
    return {"method": "textDocument/publishDiagnostics", "params": params}


mode = sys.argv[1]
docs = {}  # uri -> (version, text)
held = []
while True:
    m = read()
    method = m.get("method")
    p = m.get("params") or {}
    if "id" not in m:
        if method == "exit":
            sys.exit(0)
        if method == "textDocument/didOpen":
            d = p["textDocument"]
            docs[d["uri"]] = (d["version"], d["text"])
            if mode != "pull":
                send(publish(d["uri"]))
        elif method == "textDocument/didChange":
            uri = p["textDocument"]["uri"]
            docs[uri] = (p["textDocument"]["version"], p["contentChanges"][-1]["text"])
            if mode == "hold":
                held.append(publish(uri))
            elif mode == "debounce":
                held = [h for h in held if h["params"]["uri"] != uri] + [publish(uri)]
            elif mode == "clangd":
                if p.get("wantDiagnostics") is True:
                    send(publish(uri))
            elif mode != "pull":
                send(publish(uri))
        elif method == "textDocument/didClose":
            docs.pop(p["textDocument"]["uri"], None)
        continue
    for h in held:
        send(h)
    held = []
    if method == "initialize":
        caps = {"hoverProvider": True, "textDocumentSync": {"openClose": True, "change": 1, "save": {"includeText": False}}}
        if mode == "pull":
            caps["diagnosticProvider"] = {"interFileDependencies": False, "workspaceDiagnostics": False}
        send({"id": m["id"], "result": {"capabilities": caps, "serverInfo": {"name": "clangd" if mode == "clangd" else "diag"}}})
    elif method == "textDocument/hover":
        send({"id": m["id"], "result": {"contents": {"kind": "plaintext", "value": "ok"}}})
    elif method == "textDocument/diagnostic" and mode == "pull":
        uri = p["textDocument"]["uri"]
        send({"id": m["id"], "result": {"kind": "full", "items": diagnostics(docs.get(uri, (0, ""))[1])}})
    elif method == "shutdown":
        send({"id": m["id"], "result": None})
    else:
        send({"id": m["id"], "error": {"code": -32601, "message": "method not found"}})
