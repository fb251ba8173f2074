// A scripted libnvidia-ml.so.1 for the tests: the NVML entry points headroom loads, with C linkage
// and nvml.h's signatures, answering from the scenario named by HEADROOM_FAKE_NVML_SCENARIO:
//   one_gpu            one H100 80GB with one python process (the default)
//   eight_gpus         eight H100 80GB, GPU 3 and GPU 5 busy
//   mig                GPU 0 an A100 80GB in MIG mode (3g.40gb in slot 0, 1g.10gb in slot 2), GPU 1 plain
//   version_mismatch   nvmlInit_v2 fails with NVML_ERROR_LIB_RM_VERSION_MISMATCH
//   driver_not_loaded  nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED
//   nvml_error         nvmlDeviceGetCount_v2 fails with NVML_ERROR_UNKNOWN
//   gpu_lost           two GPUs, GPU 1 fell off the bus (NVML_ERROR_GPU_IS_LOST)
//   all_lost           one GPU, and it fell off the bus
//   no_permission      one GPU whose process list is refused (NVML_ERROR_NO_PERMISSION)
//   no_devices         the driver works but there is no GPU
// Built twice: with FAKE_NVML_OLD_API the versioned memory/process functions and the MIG functions
// are not exported, as from an old driver.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int k_success = 0;
constexpr int k_not_supported = 3;
constexpr int k_no_permission = 4;
constexpr int k_not_found = 6;
constexpr int k_insufficient_size = 7;
constexpr int k_driver_not_loaded = 9;
constexpr int k_gpu_is_lost = 15;
constexpr int k_version_mismatch = 18;
constexpr int k_unknown = 999;
constexpr unsigned long long k_mib = 1024ull * 1024ull;

struct FakeProcess {
  unsigned pid;
  const char* name;
  unsigned long long used;
};

struct FakeDevice {
  std::string name;
  std::string uuid;
  unsigned long long total, reserved, used;
  int utilization;  // -1: NOT_SUPPORTED
  std::vector<FakeProcess> processes;
  bool mig_enabled = false;
  std::vector<FakeDevice*> mig_slots;  // nullptr: empty slot
  bool is_mig = false;
  int lost = 0;  // 1: the handle cannot be had (GPU_IS_LOST)
  int process_error = 0;
};

std::string scenario() {
  const char* s = std::getenv("HEADROOM_FAKE_NVML_SCENARIO");
  return s && *s ? s : "one_gpu";
}

FakeDevice h100(int i, unsigned long long used_mib, std::vector<FakeProcess> procs, int util) {
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "GPU-6b3f9a2e-1c4d-4e8f-9a7b-00000000000%d", i);
  // 81559 MiB total, 468 MiB reserved: the observed nvidia-smi and CUDA totals of an H100 SXM.
  return FakeDevice{"NVIDIA H100 80GB HBM3", uuid, 81559 * k_mib, 468 * k_mib, used_mib * k_mib, util, std::move(procs)};
}

// MIG devices of the mig scenario (a deque-like fixed store so that handles stay valid).
FakeDevice g_mig_devices[2];

std::vector<FakeDevice> build(const std::string& s) {
  std::vector<FakeDevice> d;
  const unsigned long long python_used = 3328599654ull;  // 3.10 GiB
  if (s == "one_gpu" || s == "no_permission") {
    d.push_back(h100(0, 0, {{4242, "/usr/bin/python3", python_used}}, 37));
    d[0].used = python_used + 4 * k_mib;
    if (s == "no_permission") d[0].process_error = k_no_permission;
  } else if (s == "eight_gpus") {
    for (int i = 0; i < 8; ++i) d.push_back(h100(i, 4, {}, 0));
    d[3].processes = {{5001, "/opt/venv/bin/python", 72ull * 1024 * k_mib}};
    d[3].used = 72ull * 1024 * k_mib + 4 * k_mib;
    d[3].utilization = 98;
    d[5].processes = {{5002, "/usr/bin/python3", 10ull * 1024 * k_mib}, {5003, "/usr/local/bin/ollama", 2048 * k_mib}};
    d[5].used = 12ull * 1024 * k_mib + 4 * k_mib;
    d[5].utilization = 12;
  } else if (s == "mig") {
    FakeDevice parent{"NVIDIA A100-SXM4-80GB", "GPU-a100a100-0000-4000-8000-000000000000", 81920 * k_mib, 0, 0, -1, {}};
    parent.mig_enabled = true;
    g_mig_devices[0] = FakeDevice{"NVIDIA A100-SXM4-80GB MIG 3g.40gb", "MIG-11111111-2222-4333-8444-555555555555",
                                  40192 * k_mib, 0, 12ull * 1024 * k_mib + 13 * k_mib, -1,
                                  {{6001, "/usr/bin/python3", 12ull * 1024 * k_mib}}};
    g_mig_devices[1] = FakeDevice{"NVIDIA A100-SXM4-80GB MIG 1g.10gb", "MIG-66666666-7777-4888-8999-aaaaaaaaaaaa",
                                  9728 * k_mib, 0, 13 * k_mib, -1, {}};
    g_mig_devices[0].is_mig = g_mig_devices[1].is_mig = true;
    parent.mig_slots = {&g_mig_devices[0], nullptr, &g_mig_devices[1], nullptr, nullptr, nullptr, nullptr};
    d.push_back(parent);
    d.push_back(FakeDevice{"NVIDIA A100-SXM4-80GB", "GPU-a100a100-0000-4000-8000-000000000001", 81920 * k_mib,
                           870 * k_mib, 4 * k_mib, 0, {}});
  } else if (s == "gpu_lost") {
    d.push_back(h100(0, 4, {}, 0));
    d.push_back(h100(1, 4, {}, 0));
    d[1].lost = 1;
  } else if (s == "all_lost") {
    d.push_back(h100(0, 4, {}, 0));
    d[0].lost = 1;
  }
  return d;
}

// The devices of the current scenario; rebuilt when the scenario changes, because the library may
// stay loaded between the probes of one test process.
std::vector<FakeDevice>& devices() {
  static std::string built_for;
  static std::vector<FakeDevice> list;
  std::string s = scenario();
  if (s != built_for || list.empty()) {
    list = build(s);
    built_for = s;
  }
  return list;
}

FakeDevice* dev(void* handle) { return static_cast<FakeDevice*>(handle); }

void copy(const std::string& s, char* buf, unsigned len) {
  std::strncpy(buf, s.c_str(), len);
  if (len) buf[len - 1] = '\0';
}

struct Memory {
  unsigned long long total, free, used;
};
struct MemoryV2 {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
struct Utilization {
  unsigned int gpu, memory;
};
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long used;
};
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used;
  unsigned int gpu_instance, compute_instance;
};

template <class Info>
int processes(void* handle, unsigned* count, Info* infos) {
  FakeDevice* d = dev(handle);
  if (d->process_error) return d->process_error;
  if (*count < d->processes.size()) {
    *count = static_cast<unsigned>(d->processes.size());
    return k_insufficient_size;
  }
  *count = static_cast<unsigned>(d->processes.size());
  for (std::size_t i = 0; i < d->processes.size(); ++i) {
    infos[i] = Info{};
    infos[i].pid = d->processes[i].pid;
    infos[i].used = d->processes[i].used;
  }
  return k_success;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  std::string s = scenario();
  if (s == "version_mismatch") return k_version_mismatch;
  if (s == "driver_not_loaded") return k_driver_not_loaded;
  return k_success;
}

int nvmlShutdown() { return k_success; }

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    case 18: return "Driver/library version mismatch";
    default: return "Unknown Error";
  }
}

int nvmlSystemGetDriverVersion(char* version, unsigned len) {
  copy("550.54.15", version, len);
  return k_success;
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  if (scenario() == "nvml_error") return k_unknown;
  *count = static_cast<unsigned>(devices().size());
  return k_success;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** handle) {
  if (index >= devices().size()) return 2;
  if (devices()[index].lost) return k_gpu_is_lost;
  *handle = &devices()[index];
  return k_success;
}

int nvmlDeviceGetName(void* handle, char* name, unsigned len) {
  copy(dev(handle)->name, name, len);
  return k_success;
}

int nvmlDeviceGetUUID(void* handle, char* uuid, unsigned len) {
  copy(dev(handle)->uuid, uuid, len);
  return k_success;
}

int nvmlDeviceGetMemoryInfo(void* handle, Memory* m) {
  // Drivers since R510 count the reserve as used in this older call.
  FakeDevice* d = dev(handle);
  m->total = d->total;
  m->used = d->used + d->reserved;
  m->free = d->total - m->used;
  return k_success;
}

int nvmlDeviceGetUtilizationRates(void* handle, Utilization* u) {
  FakeDevice* d = dev(handle);
  if (d->utilization < 0) return k_not_supported;
  u->gpu = static_cast<unsigned>(d->utilization);
  u->memory = 0;
  return k_success;
}

int nvmlDeviceGetComputeRunningProcesses(void* handle, unsigned* count, ProcessInfoV1* infos) {
  return processes(handle, count, infos);
}

int nvmlSystemGetProcessName(unsigned pid, char* name, unsigned len) {
  for (const auto& d : devices()) {
    std::vector<const FakeDevice*> all = {&d};
    for (const auto* m : d.mig_slots)
      if (m) all.push_back(m);
    for (const auto* x : all)
      for (const auto& p : x->processes)
        if (p.pid == pid) {
          copy(p.name, name, len);
          return k_success;
        }
  }
  return k_not_found;
}

#ifndef FAKE_NVML_OLD_API
int nvmlDeviceGetMemoryInfo_v2(void* handle, MemoryV2* m) {
  FakeDevice* d = dev(handle);
  if (d->is_mig) return k_not_supported;  // exercises the fallback to nvmlDeviceGetMemoryInfo
  if (m->version != (sizeof(MemoryV2) | (2u << 24))) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  m->total = d->total;
  m->reserved = d->reserved;
  m->used = d->used;
  m->free = d->total - d->reserved - d->used;
  return k_success;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void* handle, unsigned* count, ProcessInfo* infos) {
  return processes(handle, count, infos);
}

int nvmlDeviceGetComputeRunningProcesses_v2(void* handle, unsigned* count, ProcessInfo* infos) {
  return processes(handle, count, infos);
}

int nvmlDeviceGetMigMode(void* handle, unsigned* current, unsigned* pending) {
  FakeDevice* d = dev(handle);
  if (scenario() != "mig") return k_not_supported;
  *current = *pending = d->mig_enabled ? 1 : 0;
  return k_success;
}

int nvmlDeviceGetMaxMigDeviceCount(void* handle, unsigned* count) {
  *count = static_cast<unsigned>(dev(handle)->mig_slots.size());
  return k_success;
}

int nvmlDeviceGetMigDeviceHandleByIndex(void* handle, unsigned index, void** mig) {
  FakeDevice* d = dev(handle);
  if (index >= d->mig_slots.size() || d->mig_slots[index] == nullptr) return k_not_found;
  *mig = d->mig_slots[index];
  return k_success;
}
#endif

}  // extern "C"
