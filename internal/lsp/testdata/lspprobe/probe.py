"""A language server that answers hover with whether it could write the
file named by its first argument: the sandbox tests' probe. It speaks just
enough of the protocol (initialize, hover, shutdown, exit) and never
publishes diagnostics. A second argument changes its manners: "indexing"
reports work in progress that never ends and answers hover with nothing;
"silent" never answers hover; "failing" writes a Python traceback to stderr
and answers hover with nothing, "failing-message" does the same through a
window/logMessage of type Error, "empty" just answers with nothing, and
"lingering" answers hover, then closes its output and exits with status 3
half a second later."""
import json
import os
import sys
import time


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


probe = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else ""
while True:
    m = read()
    method = m.get("method")
    if "id" not in m:
        if method == "exit":
            sys.exit(0)
        if method == "initialized" and mode == "indexing":
            send({"method": "$/progress", "params": {"token": "idx", "value": {"kind": "begin", "title": "Indexing", "percentage": 0}}})
            send({"method": "$/progress", "params": {"token": "idx", "value": {"kind": "report", "percentage": 40}}})
        continue
    if method == "initialize":
        send({"id": m["id"], "result": {"capabilities": {"hoverProvider": True, "textDocumentSync": 1}, "serverInfo": {"name": "probe"}}})
    elif method == "textDocument/hover" and mode == "indexing":
        send({"id": m["id"], "result": None})
    elif method == "textDocument/hover" and mode == "silent":
        pass
    elif method == "textDocument/hover" and mode == "failing":
        sys.stderr.write("2026-11-26 12:00:00,000 UTC - WARNING - probe - Failed to load hook hover: [Errno 13] Permission denied: '/.cache'\n"
                         "Traceback (most recent call last):\n  File \"probe.py\", line 1, in hover\n"
                         "PermissionError: [Errno 13] Permission denied: '/.cache'\n")
        sys.stderr.flush()
        send({"id": m["id"], "result": None})
    elif method == "textDocument/hover" and mode == "failing-message":
        send({"method": "window/logMessage", "params": {"type": 1, "message": "hover crashed: cannot open the index"}})
        send({"id": m["id"], "result": None})
    elif method == "textDocument/hover" and mode == "empty":
        send({"id": m["id"], "result": None})
    elif method == "textDocument/hover" and mode == "lingering":
        send({"id": m["id"], "result": {"contents": {"kind": "plaintext", "value": "lingering"}}})
        os.close(1)
        time.sleep(0.5)
        sys.exit(3)
    elif method == "textDocument/hover":
        try:
            with open(probe, "w") as f:
                f.write("escaped\n")
            text = "wrote " + probe
        except OSError as e:
            text = "could not write %s: %s" % (probe, e.strerror)
        send({"id": m["id"], "result": {"contents": {"kind": "plaintext", "value": text}}})
    elif method == "shutdown":
        send({"id": m["id"], "result": None})
    else:
        send({"id": m["id"], "error": {"code": -32601, "message": "method not found"}})
