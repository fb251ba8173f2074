#!/usr/bin/env bash
# GET /openapi.json describes what the server really answers: each component schema is valid
# JSON Schema (2020-12, as OpenAPI 3.1 uses), and real answers of every route, successes and
# errors, validate against the schema the document gives for that route and status (Debian's
# python3-jsonschema). Request bodies the other tests send validate against the request schemas.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
src="${HEADROOM_SOURCE_DIR:?}"
py=/usr/bin/python3
"$py" -c 'import jsonschema' 2> /dev/null || { echo "SKIP: python3-jsonschema not installed (scripts/setup.sh --test)"; exit 0; }
tmp="$(mktemp -d)"
servers=()
source "$(dirname "${BASH_SOURCE[0]}")/lib/serve.sh"
trap 'stop_servers; rm -rf "$tmp"' EXIT
export HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi \
  HEADROOM_DB="$tmp/history.db"
start_server s --allow-record --max-body-bytes 4K --no-access-log
"$py" - "$s_url" "$src/tests/data/logs" <<'PY'
import gzip, json, sys, urllib.request, urllib.error
from jsonschema import Draft202012Validator

url, logs = sys.argv[1], sys.argv[2]
doc = json.load(urllib.request.urlopen(url + "/openapi.json"))
assert doc["openapi"].startswith("3.1"), doc["openapi"]
failures = []
for name, schema in doc["components"]["schemas"].items():
    Draft202012Validator.check_schema(schema)

def validator(schema):
    # Local references (#/components/schemas/X) resolve inside a root that carries the components.
    return Draft202012Validator({**schema, "components": doc["components"]})

def call(method, path, body=None, content_type="application/json", headers=None):
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": content_type, **(headers or {})})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.read(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers.get("Content-Type", "")

seen = set()
def check(method, path, body=None, expect=200, **kw):
    route = path.split("?")[0]
    op = doc["paths"].get(route, {}).get(method.lower())
    if op is None:
        failures.append(f"{method} {route}: not in the document")
        return
    if isinstance(body, dict):
        req_schema = op["requestBody"]["content"]["application/json"]["schema"]
        errs = list(validator(req_schema).iter_errors(body))
        if expect < 400 and errs:
            failures.append(f"{method} {path}: request body does not validate: {errs[0].message}")
    status, raw, ctype = call(method, path, body, **kw)
    if status != expect:
        failures.append(f"{method} {path}: status {status}, expected {expect}: {raw[:200]!r}")
        return
    response = op["responses"].get(str(status))
    if response is None:
        failures.append(f"{method} {path}: status {status} is not documented")
        return
    seen.add((method, route, status))
    media = response["content"]
    if "application/json" not in media:
        assert ctype.startswith("text/plain"), ctype
        return
    errs = sorted(validator(media["application/json"]["schema"]).iter_errors(json.loads(raw)), key=lambda e: e.path)
    for e in errs[:3]:
        failures.append(f"{method} {path} {status}: {'/'.join(map(str, e.path))}: {e.message[:200]}")

model = "codellama/CodeLlama-7b-hf"
check("POST", "/v1/check", {"model": model, "gpu": "H100", "vllm_version": "0.19.0", "flags": {"max_model_len": 4096}})
check("POST", "/v1/check", {"command": "vllm serve meta-llama/Llama-3.1-70B-Instruct", "gpu": "H100"})
check("POST", "/v1/check", {"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "A100-40GB", "gpus": 2,
                            "flags": {"tensor_parallel_size": 2, "seed": 1}})
check("POST", "/v1/plan", {"model": model, "gpu": "L4", "context": 4096, "concurrency": 8})
check("POST", "/v1/plan", {"model": "meta-llama/Llama-3.1-70B-Instruct", "gpu": "L4", "context": 131072})
check("POST", "/v1/diagnose", open(f"{logs}/v1_kv_insufficient.log", "rb").read(), content_type="text/plain")
check("POST", "/v1/diagnose?gpus=2", gzip.compress(open(f"{logs}/v1_startup_ok.log", "rb").read()), content_type="application/gzip")
check("GET", "/v1/gpus")
check("GET", "/v1/models?q=llama")
check("POST", "/v1/record", open(f"{logs}/v1_startup_ok.log", "rb").read(), content_type="text/plain")
check("GET", "/v1/history")
check("GET", "/healthz")
check("GET", "/metrics")
# errors, each status the document promises for check
check("POST", "/v1/check", b"{", expect=400)
check("POST", "/v1/check", {"model": model, "gpu": "H100", "flags": {"gpu_memory_utilization": 2}}, expect=422)
check("POST", "/v1/check", {"model": "acme/none", "gpu": "H100"}, expect=404)
check("POST", "/v1/check", {"model": "/etc", "gpu": "H100"}, expect=403)
check("POST", "/v1/check", {"model": "x" * 5000}, expect=413)
check("POST", "/v1/plan", {"model": model, "gpu": "L4", "goal": "fastest"}, expect=422)
check("GET", "/v1/gpus?live=1", expect=403)
check("POST", "/v1/record", b"INFO nothing to see\n", content_type="text/plain", expect=422)
# Every documented route was exercised.
for route, ops in doc["paths"].items():
    for method in ops:
        if route != "/openapi.json" and not any(m == method.upper() and r == route for m, r, _ in seen):
            failures.append(f"{method.upper()} {route}: documented but not exercised")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
rc=$?
[ $rc -eq 0 ] && echo "serve_openapi: all passed"
exit $rc
