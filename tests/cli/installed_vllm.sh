#!/usr/bin/env bash
# Without --vllm-version, `headroom check` and `plan` model the vLLM installed in the Python
# environment (its site-packages metadata), and on v0.8-v0.11.0 whether FlashInfer is installed
# beside it settles the sampler's path, which the KV range otherwise leaves open.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export NO_COLOR=1 HF_HUB_OFFLINE=1 HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi

pip_site="$tmp/pip/lib/python3.12/site-packages"
docker_site="$tmp/docker/lib/python3.12/site-packages"
mkdir -p "$pip_site/vllm-0.10.1.1.dist-info" "$pip_site/torch-2.7.1.dist-info" \
  "$docker_site/vllm-0.10.1.1.dist-info" "$docker_site/flashinfer_python-0.2.8.dist-info"
args=(check Qwen/Qwen2.5-7B-Instruct --gpu "A100 80GB" --max-model-len 8192 --offline)
reason="FlashInfer's top-k/top-p kernels only when FlashInfer is installed"

# A plain pip install: v0.10.1.1 without FlashInfer, so the sort path and no such reason.
HEADROOM_PYTHON_SITE="$pip_site" "$bin" "${args[@]}" >"$tmp/pip.out" 2>"$tmp/pip.err" || fail "pip: exit $?"
grep -q "^vllm    0.10.1.1 " "$tmp/pip.out" || fail "pip: not modelled as 0.10.1.1: $(grep '^vllm' "$tmp/pip.out")"
grep -q "note: modelling vLLM 0.10.1.1, installed in $pip_site" "$tmp/pip.err" || fail "pip: no note: $(cat "$tmp/pip.err")"
grep -q "FlashInfer is not installed beside it: the sampler takes PyTorch's sort path" "$tmp/pip.err" ||
  fail "pip: no sampler note: $(cat "$tmp/pip.err")"
grep -q "$reason" "$tmp/pip.out" && fail "pip: the range still leaves the sampler's path open"

# vLLM's image: FlashInfer installed, the kernels; their peak is smaller, so more KV cache.
HEADROOM_PYTHON_SITE="$docker_site" "$bin" "${args[@]}" >"$tmp/docker.out" 2>"$tmp/docker.err" || fail "docker: exit $?"
grep -q "FlashInfer is installed beside it: the sampler takes FlashInfer's top-k/top-p kernels" "$tmp/docker.err" ||
  fail "docker: no sampler note: $(cat "$tmp/docker.err")"
tokens() { grep -o '^kv cache  [0-9,]* tokens' "$1" | tr -dc '0-9'; }
[ "$(tokens "$tmp/docker.out")" -gt "$(tokens "$tmp/pip.out")" ] ||
  fail "docker: $(tokens "$tmp/docker.out") tokens, not more than pip's $(tokens "$tmp/pip.out")"

# --vllm-version wins, silently; nothing installed leaves the newest modelled version and the range's reason.
HEADROOM_PYTHON_SITE="$pip_site" "$bin" "${args[@]}" --vllm-version 0.10.1.1 >"$tmp/named.out" 2>"$tmp/named.err" || fail "named: exit $?"
grep -q "modelling vLLM" "$tmp/named.err" && fail "named: detection ran despite --vllm-version"
grep -q "$reason" "$tmp/named.out" || fail "named: the range lost the sampler's reason without the installation"
HEADROOM_PYTHON_SITE="" "$bin" "${args[@]}" >"$tmp/none.out" 2>"$tmp/none.err" || fail "none: exit $?"
grep -q "modelling vLLM" "$tmp/none.err" && fail "none: a note without an installation"

# plan models the installed version too.
HEADROOM_PYTHON_SITE="$pip_site" "$bin" plan Qwen/Qwen2.5-7B-Instruct --gpu "A100 80GB" --offline >"$tmp/plan.out" 2>"$tmp/plan.err" ||
  fail "plan: exit $?: $(cat "$tmp/plan.err")"
grep -q "note: modelling vLLM 0.10.1.1" "$tmp/plan.err" || fail "plan: no note: $(cat "$tmp/plan.err")"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all installed-vLLM checks passed"
