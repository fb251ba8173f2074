#!/usr/bin/env bash
# `headroom gpus` against the NVML stand-in library and the fake nvidia-smi, compared with golden
# files in tests/golden/gpus/ (HEADROOM_UPDATE_GOLDEN=1 rewrites them).
set -uo pipefail
bin="${HEADROOM_BIN:?}"
src="${HEADROOM_SOURCE_DIR:?}"
fake_nvml="${HEADROOM_BINARY_DIR:?}/tests/support/fake_nvml/libfake_nvml.so"
fake_smi="$src/tests/data/nvidia_smi/fake-nvidia-smi"
golden="$src/tests/golden/gpus"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0

source "$(dirname "${BASH_SOURCE[0]}")/lib/golden.sh"

[ -f "$fake_nvml" ] || { echo "FAIL: $fake_nvml is missing (build headroom_tests first)"; exit 1; }

# run NAME EXPECTED_EXIT ENV... -- ARGS...: runs headroom with the environment, keeps stdout/stderr.
run() {
  local name="$1" expected="$2"
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$bin" gpus "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  [ "$rc" -eq "$expected" ] || fail "$name: exit $rc, expected $expected; stderr: $(cat "$tmp/$name.err")"
}



nvml=(HEADROOM_NVML_LIBRARY="$fake_nvml" HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi)
smi=(HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 HEADROOM_NVIDIA_SMI="$fake_smi")

run one_gpu 0 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=one_gpu --
check_golden one_gpu one_gpu.txt
check_stderr one_gpu ""

run one_gpu_json 0 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=one_gpu -- --format json
check_golden one_gpu_json one_gpu.json

run eight_gpus 0 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=eight_gpus --
check_golden eight_gpus eight_gpus.txt

run eight_gpus_json 0 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=eight_gpus -- --format json
check_golden eight_gpus_json eight_gpus.json

run mig 0 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=mig --
check_golden mig mig.txt

run mig_json 0 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=mig -- --format json
check_golden mig_json mig.json

run no_permission 0 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=no_permission --
check_golden no_permission no_permission.txt
check_stderr no_permission "headroom: warning: no permission to list the processes on GPU 0 (NVML: Insufficient Permissions); they are shown as unknown. Run headroom as root, or on the host rather than in a container, to see them"

run gpu_lost 0 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=gpu_lost --
check_stderr gpu_lost "headroom: warning: GPU 1 has fallen off the bus (NVML error 15: GPU is lost); check 'dmesg' for Xid 79 errors, then reset the GPU or reboot; it is left out"

run version_mismatch 1 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=version_mismatch --
check_stderr version_mismatch "headroom: error: the NVIDIA kernel driver and libnvidia-ml.so.1 come from different driver versions (NVML error 18: Driver/library version mismatch), usually after a driver upgrade without a reboot; reboot, or reinstall the driver so that both match
To plan without a GPU, name one with --gpu NAME ('headroom gpus --catalog' lists them)."
[ -s "$tmp/version_mismatch.out" ] && fail "version_mismatch: printed on stdout"

run driver_not_loaded 1 "${nvml[@]}" HEADROOM_FAKE_NVML_SCENARIO=driver_not_loaded --
grep -q "sudo modprobe nvidia" "$tmp/driver_not_loaded.err" || fail "driver_not_loaded: no modprobe advice"

run no_gpu 1 HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi --
check_stderr no_gpu "headroom: error: no NVIDIA GPU found: NVML could not be loaded (/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory) and '/nonexistent/nvidia-smi' was not found
To plan without a GPU, name one with --gpu NAME ('headroom gpus --catalog' lists them)."

run smi_eight 0 "${smi[@]}" HEADROOM_FAKE_NVIDIA_SMI_SCENARIO=eight_gpus --
check_golden smi_eight nvidia_smi_eight_gpus.txt
check_stderr smi_eight "headroom: warning: NVML could not be loaded (/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory); the GPUs were read with nvidia-smi, which does not report reserved memory"

run smi_messy_json 0 "${smi[@]}" HEADROOM_FAKE_NVIDIA_SMI_SCENARIO=messy -- --format json
check_golden smi_messy_json nvidia_smi_messy.json

run smi_no_driver 1 "${smi[@]}" HEADROOM_FAKE_NVIDIA_SMI_SCENARIO=driver_not_loaded --
grep -q "the NVIDIA kernel driver is not loaded" "$tmp/smi_no_driver.err" || fail "smi_no_driver: message"

run catalog 0 -- --catalog
check_golden catalog catalog.txt

run catalog_json 0 -- --catalog --format json
check_golden catalog_json catalog.json

run bad_format 2 -- --format yaml
check_stderr bad_format "headroom: error: --format: expected text or json, got 'yaml'"

run help 0 -- --help
grep -q -- "--catalog" "$tmp/help.out" || fail "help: --catalog not in --help"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all gpus CLI checks passed"
