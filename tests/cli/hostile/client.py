"""Hostile clients against a real `headroom serve` on loopback, mixed with normal requests.

usage: client.py PORT PID MODELS_DIR  (the server was started by tests/cli/serve_hostile.sh)

Abusers connect from 127.0.0.2 and up (one address per kind of abuse), normal requests from
127.0.0.1, so the per-client connection limit applies to the abusers only. Prints the figures
(latency of normal requests while under abuse, RSS) and exits 1 on any failed expectation.
"""
import http.client
import json
import os
import select
import socket
import sys
import threading
import time

PORT, PID, MODELS = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
HOST = "127.0.0.1"
NORMAL_LATENCY_S = 2.0   # a normal request answers within this while the server is abused
# the server's resident memory stays under this (serve_hostile.sh raises it under AddressSanitizer)
RSS_LIMIT_MIB = int(os.environ.get("HEADROOM_HOSTILE_RSS_MIB", "400"))
failures = []
latencies = []


def expect(what, cond):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def alive():
    try:
        os.kill(PID, 0)
        return True
    except OSError:
        return False


def rss_mib():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def request(method, path, body=None, source="127.0.0.1", timeout=30, headers=None):
    conn = http.client.HTTPConnection(HOST, PORT, timeout=timeout, source_address=(source, 0))
    start = time.monotonic()
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    conn.request(method, path, body=data, headers=headers or {"Content-Type": "application/json"})
    r = conn.getresponse()
    text = r.read()
    conn.close()
    return r.status, text, time.monotonic() - start, dict(r.getheaders())


NORMAL = {"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "flags": {"max_model_len": 4096}}


def normal_check(label):
    status, text, took, _ = request("POST", "/v1/check", NORMAL)
    latencies.append(took)
    expect(f"{label}: a normal check answers 200 (got {status}: {text[:200]!r})", status == 200)
    expect(f"{label}: a normal check answers within {NORMAL_LATENCY_S} s (took {took:.2f} s)", took < NORMAL_LATENCY_S)
    return took


def raw(source, payload=b"", timeout=10):
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect((HOST, PORT))
    if payload:
        s.sendall(payload)
    return s


def read_answer(s, limit=65536):
    data = b""
    try:
        while len(data) < limit:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return data


def answers_within(socks, seconds):
    """The first bytes each of `socks` answers within `seconds`, by socket; silent ones are left out."""
    answers = {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(answers) < len(socks):
        ready, _, _ = select.select([s for s in socks if s not in answers], [], [], 0.1)
        for s in ready:
            try:
                answers[s] = s.recv(4096)
            except OSError:
                answers[s] = b""
    return answers


def error_of(text):
    try:
        return json.loads(text)["error"]
    except Exception:
        return {}


# ---- a baseline ----
for _ in range(3):
    normal_check("baseline")
rss_start = rss_mib()

# ---- long strings in every field: refused quickly, with a short message ----
LONG = "A" * 500_000
fields = [("check", {"model": LONG, "gpu": "H100"}), ("check", {"model": "codellama/CodeLlama-7b-hf", "gpu": LONG}),
          ("check", {"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "vllm_version": LONG}),
          ("check", {"command": "vllm serve " + LONG, "gpu": "H100"}),
          ("check", {"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "flags": {"kv_cache_dtype": LONG}}),
          ("check", {"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "flags": {"a" * 200_000: 1}}),
          ("check", {"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", LONG: 1}),
          ("plan", {"model": LONG, "gpu": "H100"}), ("plan", {"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "goal": LONG}),
          ("check", {"command": "LLM(model='x')\nos.environ['VLLM_X'] = '" + "a" * 400_000, "gpu": "H100"}),
          ("check", {"model": "Q" * 20_000, "gpu": "H100"}), ("check", {"model": "codellama/CodeLlama-7b-hf", "gpu": "Z" * 20_000})]
for route, body in fields:
    status, text, took, _ = request("POST", "/v1/" + route, body)
    err = error_of(text)
    expect(f"long {route} field {list(body)}: a 4xx error (got {status})", 400 <= status < 500 and err)
    expect(f"long {route} field {list(body)}: answered in {took:.2f} s", took < 3)
    expect(f"long {route} field {list(body)}: a short message ({len(err.get('message', ''))} bytes)",
           len(err.get("message", "")) < 4096 and len(err.get("where", "")) < 512)
expect("the server is alive after long strings", alive())

# ---- huge sizes: refused at the edge, naming the JSON member ----
sizes = [({"flags": {"tensor_parallel_size": 1000000}}, "flags.tensor_parallel_size"),
         ({"flags": {"pipeline_parallel_size": 8192}}, "flags.pipeline_parallel_size"),
         ({"flags": {"data_parallel_size": 2**31 - 1}}, "flags.data_parallel_size"),
         ({"flags": {"max_model_len": 2**62}}, "flags.max_model_len"),
         ({"flags": {"max_num_seqs": 10**9}}, "flags.max_num_seqs"),
         ({"gpus": 10**9}, "gpus"), ({"nodes": 2**40}, "nodes"), ({"gpu_memory_gib": 1e300}, "gpu_memory_gib"),
         ({"used_gib": -5}, "used_gib"), ({"gpus": 2**64}, "gpus")]
for extra, where in sizes:
    body = dict(NORMAL, **extra)
    if "flags" in extra:
        body["flags"] = extra["flags"]
    status, text, took, _ = request("POST", "/v1/check", body)
    err = error_of(text)
    expect(f"size {extra}: 4xx (got {status}: {text[:160]!r})", 400 <= status < 500)
    expect(f"size {extra}: where '{err.get('where')}' is the JSON member {where}", err.get("where") == where)
    expect(f"size {extra}: answered in {took:.2f} s", took < 3)
for cmd in ["vllm serve Qwen/Qwen2.5-7B-Instruct -tp 65536", "vllm serve Qwen/Qwen2.5-7B-Instruct -pp 8192"]:
    status, text, took, _ = request("POST", "/v1/check", {"command": cmd, "gpu": "H100"})
    expect(f"{cmd}: 422 (got {status}: {text[:160]!r})", status == 422)
    expect(f"{cmd}: answered in {took:.2f} s", took < 3)
plan_sizes = [({"context": 2**62}, "context"), ({"concurrency": 10**9}, "concurrency"), ({"max_gpus": 10**9}, "max_gpus"),
              ({"gpus_per_node": 10**6}, "gpus_per_node"), ({"margin_gib": 1e308}, "margin_gib")]
for extra, where in plan_sizes:
    status, text, took, _ = request("POST", "/v1/plan", dict({"model": "codellama/CodeLlama-7b-hf", "gpu": "H100"}, **extra))
    err = error_of(text)
    expect(f"plan {extra}: 4xx naming {where} (got {status}, where {err.get('where')})", 400 <= status < 500 and err.get("where") == where)
    expect(f"plan {extra}: answered in {took:.2f} s", took < 3)

# ---- CLI flag names never appear in `where` ----
status, text, _, _ = request("POST", "/v1/check", {"model": "codellama/CodeLlama-7b-hf", "gpu": "NoSuchGPU-9000"})
expect(f"unknown GPU: where is 'gpu' (got {error_of(text).get('where')})", status == 404 and error_of(text).get("where") == "gpu")

# ---- a model typed with spaces gets suggestions ----
status, text, _, _ = request("POST", "/v1/check", {"model": "llama 3.1 8b", "gpu": "H100"})
msg = error_of(text).get("message", "")
expect(f"'llama 3.1 8b': 404 with a suggestion (got {status}: {msg})", status == 404 and "did you mean" in msg and "Llama-3.1-8B" in msg)

# ---- escape sequences: answers are JSON (escaped), the access log never carries them ----
status, text, _, _ = request("POST", "/v1/check", {"model": "\x1b]0;owned\x07\x1b[2J\nx", "gpu": "H100"})
expect(f"an escape sequence in a model name: an error without raw control bytes ({text[:120]!r})",
       status >= 400 and b"\x1b" not in text and b"\x07" not in text)
status, text, _, _ = request("GET", "/v1/models?q=%1b%5b2J", None)
expect("an escape sequence in a query: answered without raw control bytes", b"\x1b" not in text)

# ---- a FIFO below --models-dir is refused without blocking a worker ----
for _ in range(6):  # more than the server's threads
    start = time.monotonic()
    status, text, took, _ = request("POST", "/v1/check", {"model": "fifo", "gpu": "H100"}, timeout=10)
    expect(f"FIFO config.json: refused (got {status}: {text[:200]!r})", status in (403, 404, 422) and b"regular file" in text)
    expect(f"FIFO config.json: refused in {took:.2f} s", took < 2)
normal_check("after FIFOs")

# ---- slow and silent clients hold no worker ----
silent = [raw("127.0.0.2") for _ in range(8)]                       # half-open: connect, send nothing
slow = [raw("127.0.0.3", b"POST /v1/check HTTP/1.1\r\n") for _ in range(12)]   # slowloris: a line at a time
stop = threading.Event()


def trickle():
    n = 0
    while not stop.is_set():
        for s in slow:
            try:
                s.sendall(b"X-Slow-%d: y\r\n" % n)
            except OSError:
                pass
        n += 1
        stop.wait(0.5)


t = threading.Thread(target=trickle)
t.start()
time.sleep(0.5)
for i in range(5):
    normal_check(f"under slowloris {i}")
# ---- one client with too many connections: 503 with Retry-After, at once ----
many = [raw("127.0.0.4") for _ in range(24)]
# The refused ones are answered at once; the 16 admitted ones get nothing until their head
# deadline (2 s), so whatever answers within 1.9 s is a refusal.
answers = answers_within(many, 1.9)
refused = sum(1 for a in answers.values() if a.startswith(b"HTTP/1.1 503") and b"Retry-After:" in a)
print(f"one address, 24 connections: {refused} answered 503 with Retry-After at once", flush=True)
expect(f"connections past the per-client limit answered 503 with Retry-After ({refused} of 24)", refused >= 1)
expect(f"no more than 16 connections admitted from one address ({24 - len(answers)} unanswered)", len(many) - len(answers) <= 16)
normal_check("with one client over its limit")
for s in many:
    s.close()

# ---- bodies that trickle in after their first 32 KiB hold no worker ----
# More connections than the server's 4 workers, each with a whole head, 40,000 of its 100,000 body
# bytes, then a byte every 0.5 s: the reception waits for the whole body, the workers stay free,
# and each is answered 408 when --request-timeout (4 s) passes.
head = b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
bodies = [raw("127.0.0.5", head + b" " * 40000) for _ in range(6)]
body_stop = threading.Event()


def trickle_bodies():
    while not body_stop.is_set():
        for s in bodies:
            try:
                s.sendall(b" ")
            except OSError:
                pass
        body_stop.wait(0.5)


bt = threading.Thread(target=trickle_bodies)
bt.start()
time.sleep(0.5)
for i in range(3):
    normal_check(f"under trickling bodies {i}")
timeouts = 0
for s in bodies:
    answer = read_answer(s, 4096)
    timeouts += answer.startswith(b"HTTP/1.1 408")
body_stop.set()
bt.join()
for s in bodies:
    s.close()
print(f"trickling bodies: {timeouts} of {len(bodies)} answered 408 by the reception", flush=True)
expect(f"trickling bodies answered 408 at the request deadline ({timeouts} of {len(bodies)})", timeouts == len(bodies))

# ---- uploads past the whole-body limit that trickle hold at most half the workers ----
# Six /v1/diagnose uploads announce 2 MB (past --max-body-bytes, so a worker reads the rest as it
# arrives), send their first 40 KiB, then a byte every 0.5 s. Two of the 4 workers take them, each
# until --request-timeout (4 s); the others are answered 503 with Retry-After at once, and normal
# checks keep answering. Before this bound, the uploads held every worker and normal checks waited
# for the request timeout.
up_head = b"POST /v1/diagnose HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2000000\r\n\r\n"
uploads = [raw("127.0.0.7", up_head + b"INFO x\n" * 6000) for _ in range(6)]
bodies = uploads
body_stop = threading.Event()
bt = threading.Thread(target=trickle_bodies)
bt.start()
time.sleep(0.3)
for i in range(3):
    normal_check(f"under trickling uploads {i}")
up_answers = answers_within(uploads, 1.0)
busy = sum(1 for a in up_answers.values() if a.startswith(b"HTTP/1.1 503") and b"Retry-After:" in a)
body_stop.set()
bt.join()
for s in uploads:
    s.close()
print(f"trickling uploads: {busy} of {len(uploads)} answered 503 with Retry-After, the rest held a worker", flush=True)
expect(f"trickling uploads past half the workers answered 503 ({busy} of {len(uploads)})", busy >= len(uploads) - 2)
time.sleep(0.2)

# ---- header floods: refused early, memory bounded ----
flood_answers = []


def header_flood(source, total_bytes):
    s = raw(source, b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    line = b"X-Flood: " + b"a" * 8000 + b"\r\n"
    sent = 0
    try:
        while sent < total_bytes:
            s.sendall(line)
            sent += len(line)
    except OSError:
        pass
    flood_answers.append(read_answer(s, 4096))
    s.close()


floods = [threading.Thread(target=header_flood, args=("127.0.0.5", 32 << 20)) for _ in range(8)]
for f in floods:
    f.start()
for i in range(3):
    normal_check(f"under a header flood {i}")
for f in floods:
    f.join()
rss_after_flood = rss_mib()
answered_431 = sum(1 for a in flood_answers if a.startswith(b"HTTP/1.1 431"))
print(f"header floods: {answered_431} of {len(flood_answers)} read a 431 before the reset", flush=True)
many_headers = b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n"
s = raw("127.0.0.6", many_headers)
answer = read_answer(s, 4096)
s.close()
expect(f"200 header lines: 431 ({answer[:60]!r})", answer.startswith(b"HTTP/1.1 431"))
s = raw("127.0.0.6", b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n")
answer = read_answer(s, 4096)
s.close()
expect(f"a 20,000-byte request line: 414 ({answer[:60]!r})", answer.startswith(b"HTTP/1.1 414"))

# ---- concurrent abuse mixed with normal requests ----
def abuser(k):
    for _ in range(10):
        try:
            request("POST", "/v1/check", {"model": "B" * 100_000, "gpu": "H100"}, source=f"127.0.1.{k}", timeout=10)
            request("POST", "/v1/plan", {"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "concurrency": 10**9},
                    source=f"127.0.1.{k}", timeout=10)
            request("POST", "/v1/check", b"{" * 100_000, source=f"127.0.1.{k}", timeout=10)
        except OSError:
            pass


abusers = [threading.Thread(target=abuser, args=(k,)) for k in range(1, 7)]
for a in abusers:
    a.start()
for i in range(8):
    normal_check(f"under mixed abuse {i}")
for a in abusers:
    a.join()
stop.set()
t.join()
for s in silent + slow:
    s.close()

# ---- the server lives, memory stayed bounded ----
time.sleep(0.5)
normal_check("at the end")
rss_end = rss_mib()
expect("the server never exited", alive())
expect(f"RSS after the floods {rss_after_flood:.0f} MiB < {RSS_LIMIT_MIB}", rss_after_flood < RSS_LIMIT_MIB)
expect(f"RSS at the end {rss_end:.0f} MiB < {RSS_LIMIT_MIB}", rss_end < RSS_LIMIT_MIB)
ordered = sorted(latencies)
print(f"normal requests: {len(ordered)}, p50 {ordered[len(ordered) // 2] * 1e3:.0f} ms, max {ordered[-1] * 1e3:.0f} ms "
      f"(bound {NORMAL_LATENCY_S * 1e3:.0f} ms)", flush=True)
print(f"RSS: {rss_start:.1f} MiB after the baseline, {rss_after_flood:.1f} MiB after the header floods, "
      f"{rss_end:.1f} MiB at the end (bound {RSS_LIMIT_MIB} MiB)", flush=True)
sys.exit(1 if failures else 0)
