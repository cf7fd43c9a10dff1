"""A proxy between boris and a real language server (the command in its
arguments) that delays one thing: the diagnostics a server publishes for
a file after a didChange of it are held until boris's next request, and
sent just before that request is passed on — so they reach boris after
the edit's answer went out, and before the answer of the next call that
asks the server anything. The proxy waits for the publish a change owes
before passing a request on, however slow the server is: the test that
uses it depends on no timing. Everything else passes through as is."""
import json
import subprocess
import sys
import threading


def read(f):
    headers = {}
    while True:
        line = f.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        key, _, value = line.decode().partition(":")
        headers[key.lower()] = value.strip()
    return json.loads(f.read(int(headers["content-length"])))


def write(f, msg):
    body = json.dumps(msg).encode()
    f.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    f.flush()


child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out = sys.stdout.buffer
out_lock = threading.Lock()
cond = threading.Condition()
changed = {}  # uri -> publishes held since its last didChange
held = []


def from_server():
    while True:
        m = read(child.stdout)
        if m is None:
            with cond:
                cond.notify_all()
            return
        if m.get("method") == "textDocument/publishDiagnostics":
            uri = m["params"]["uri"]
            with cond:
                if uri in changed:
                    changed[uri] += 1
                    held.append(m)
                    cond.notify_all()
                    continue
        with out_lock:
            write(out, m)


threading.Thread(target=from_server, daemon=True).start()
while True:
    m = read(sys.stdin.buffer)
    if m is None:
        child.stdin.close()
        sys.exit(child.wait())
    if m.get("method") == "textDocument/didChange":
        with cond:
            changed[m["params"]["textDocument"]["uri"]] = 0
    elif "id" in m and "method" in m:
        with cond:
            # The publish each change owes, then the request.
            cond.wait_for(lambda: child.poll() is not None or all(n > 0 for n in changed.values()), timeout=60)
            with out_lock:
                for h in held:
                    write(out, h)
            held.clear()
            changed.clear()
    write(child.stdin, m)
