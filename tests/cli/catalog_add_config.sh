#!/usr/bin/env bash
# scripts/catalog_add_config.py on copies of the catalogue files: a staged config.json becomes a
# catalogue line and a whole_config supplement; an id the catalogue has and a record without a
# config are skipped, each with its reason; --dry-run writes nothing.
set -uo pipefail
src="${HEADROOM_SOURCE_DIR:?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
cp "$src/data/models.jsonl" "$src/data/config_supplements.jsonl" "$tmp/"
before=$(grep -c . "$tmp/models.jsonl")
cat > "$tmp/staged.jsonl" <<'JSON'
{"hf_id": "example/Tiny-Llama-1B", "config": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256, "torch_dtype": "bfloat16"}, "preprocessor_config": null, "safetensors_total_size": null, "source": "a test fixture", "how_verified": "written by the test", "tier": "B"}
{"hf_id": "Qwen/Qwen3-8B", "config": {"architectures": ["Qwen3ForCausalLM"]}, "source": "x", "how_verified": "x", "tier": "B"}
{"hf_id": "example/No-Config", "config": null, "source": "x", "how_verified": "x", "tier": "B"}
JSON
py=/usr/bin/python3
$py "$src/scripts/catalog_add_config.py" "$tmp/staged.jsonl" --dry-run --data "$tmp" > "$tmp/dry.out" 2> "$tmp/dry.err" || fail "dry run exited $?"
grep -q "would add example/Tiny-Llama-1B" "$tmp/dry.out" || fail "dry run: $(cat "$tmp/dry.out")"
[ "$(grep -c . "$tmp/models.jsonl")" = "$before" ] || fail "dry run wrote models.jsonl"
$py "$src/scripts/catalog_add_config.py" "$tmp/staged.jsonl" --data "$tmp" > "$tmp/add.out" 2> "$tmp/add.err" || fail "add exited $?"
grep -q "Qwen/Qwen3-8B is in the catalogue already; skipped" "$tmp/add.err" || fail "duplicate not refused: $(cat "$tmp/add.err")"
grep -q "example/No-Config: no config with architectures; skipped" "$tmp/add.err" || fail "config-less record not refused"
[ "$(grep -c . "$tmp/models.jsonl")" = "$((before + 1))" ] || fail "models.jsonl did not gain exactly one line"
$py - "$tmp" <<'PY' || fail "the added lines are not as expected"
import json, sys
d = sys.argv[1]
line = json.loads(open(d + "/models.jsonl").read().split("\n")[-2])
sup = json.loads(open(d + "/config_supplements.jsonl").read().split("\n")[-2])
assert line["hf_id"] == "example/Tiny-Llama-1B" and line["architecture"] == "LlamaForCausalLM", line
assert line["num_hidden_layers"] == 16 and line["head_dim"] is None, line
assert line["source_quality"].startswith("B: "), line["source_quality"]
assert sup["hf_id"] == "example/Tiny-Llama-1B" and sup["whole_config"] is True, sup
assert sup["config"]["vocab_size"] == 128256, sup
PY
[ "$failures" = 0 ] || exit 1
echo "ok"
