// Reading GPUs through NVML, loaded with dlopen so that one headroom binary runs on hosts with and
// without an NVIDIA driver.
#include <dlfcn.h>

#include <string>
#include <vector>

#include "gpu/gpu_sources.h"
#include "gpu/nvml_api.h"
#include "util/strings.h"

namespace headroom::gpu {
namespace {

using nvml::Device;
using nvml::Return;

struct NvmlFunctions {
  Return (*init)() = nullptr;
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*driver_version)(char*, unsigned) = nullptr;
  Return (*device_count)(unsigned*) = nullptr;
  Return (*handle_by_index)(unsigned, Device*) = nullptr;
  Return (*name)(Device, char*, unsigned) = nullptr;
  Return (*uuid)(Device, char*, unsigned) = nullptr;
  Return (*memory)(Device, nvml::Memory*) = nullptr;
  Return (*memory_v2)(Device, nvml::MemoryV2*) = nullptr;
  Return (*utilization)(Device, nvml::Utilization*) = nullptr;
  Return (*processes_v3)(Device, unsigned*, nvml::ProcessInfo*) = nullptr;
  Return (*processes_v2)(Device, unsigned*, nvml::ProcessInfo*) = nullptr;
  Return (*processes_v1)(Device, unsigned*, nvml::ProcessInfoV1*) = nullptr;
  Return (*process_name)(unsigned, char*, unsigned) = nullptr;
  Return (*mig_mode)(Device, unsigned*, unsigned*) = nullptr;
  Return (*max_mig_devices)(Device, unsigned*) = nullptr;
  Return (*mig_handle)(Device, unsigned, Device*) = nullptr;
};

template <class F>
void bind(void* lib, const char* symbol, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
}

// Closes the library (after nvmlShutdown when initialised) on every path out.
class NvmlLibrary {
 public:
  ~NvmlLibrary() {
    if (m_initialised && m_fn.shutdown) m_fn.shutdown();
    if (m_handle) dlclose(m_handle);
  }
  std::string open(const std::string& path) {
    dlerror();
    m_handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_handle) {
      const char* e = dlerror();
      return e ? e : path + ": cannot be loaded";
    }
    bind(m_handle, "nvmlInit_v2", m_fn.init);
    bind(m_handle, "nvmlShutdown", m_fn.shutdown);
    bind(m_handle, "nvmlErrorString", m_fn.error_string);
    bind(m_handle, "nvmlSystemGetDriverVersion", m_fn.driver_version);
    bind(m_handle, "nvmlDeviceGetCount_v2", m_fn.device_count);
    bind(m_handle, "nvmlDeviceGetHandleByIndex_v2", m_fn.handle_by_index);
    bind(m_handle, "nvmlDeviceGetName", m_fn.name);
    bind(m_handle, "nvmlDeviceGetUUID", m_fn.uuid);
    bind(m_handle, "nvmlDeviceGetMemoryInfo", m_fn.memory);
    bind(m_handle, "nvmlDeviceGetMemoryInfo_v2", m_fn.memory_v2);
    bind(m_handle, "nvmlDeviceGetUtilizationRates", m_fn.utilization);
    bind(m_handle, "nvmlDeviceGetComputeRunningProcesses_v3", m_fn.processes_v3);
    bind(m_handle, "nvmlDeviceGetComputeRunningProcesses_v2", m_fn.processes_v2);
    bind(m_handle, "nvmlDeviceGetComputeRunningProcesses", m_fn.processes_v1);
    bind(m_handle, "nvmlSystemGetProcessName", m_fn.process_name);
    bind(m_handle, "nvmlDeviceGetMigMode", m_fn.mig_mode);
    bind(m_handle, "nvmlDeviceGetMaxMigDeviceCount", m_fn.max_mig_devices);
    bind(m_handle, "nvmlDeviceGetMigDeviceHandleByIndex", m_fn.mig_handle);
    std::vector<std::string> missing;
    if (!m_fn.init) missing.push_back("nvmlInit_v2");
    if (!m_fn.shutdown) missing.push_back("nvmlShutdown");
    if (!m_fn.device_count) missing.push_back("nvmlDeviceGetCount_v2");
    if (!m_fn.handle_by_index) missing.push_back("nvmlDeviceGetHandleByIndex_v2");
    if (!m_fn.name) missing.push_back("nvmlDeviceGetName");
    if (!m_fn.memory) missing.push_back("nvmlDeviceGetMemoryInfo");
    if (!missing.empty()) return path + " lacks " + util::join(missing, ", ") + " (driver older than 325?)";
    return {};
  }
  void set_initialised() { m_initialised = true; }
  const NvmlFunctions& fn() const { return m_fn; }

  // "NVML error 18: Driver/library version mismatch"
  std::string describe(Return rc) const {
    const char* text = m_fn.error_string ? m_fn.error_string(rc) : nullptr;
    return "NVML error " + std::to_string(rc) + ": " + (text ? text : "unknown error");
  }

 private:
  void* m_handle = nullptr;
  bool m_initialised = false;
  NvmlFunctions m_fn;
};

// What an nvmlInit_v2 failure means and what to do about it.
std::string explain_init_failure(const NvmlLibrary& lib, Return rc) {
  std::string nvml = " (" + lib.describe(rc) + ")";
  switch (rc) {
    case nvml::k_error_driver_not_loaded:
      return "the NVIDIA kernel driver is not loaded" + nvml +
             "; load it with 'sudo modprobe nvidia' and check that 'nvidia-smi' works";
    case nvml::k_error_lib_rm_version_mismatch:
      return "the NVIDIA kernel driver and libnvidia-ml.so.1 come from different driver versions" + nvml +
             ", usually after a driver upgrade without a reboot; reboot, or reinstall the driver so that both match";
    case nvml::k_error_no_permission:
      return "no permission to open the NVIDIA device files /dev/nvidia*" + nvml +
             "; run headroom as a user who may use the GPUs";
    case nvml::k_error_gpu_is_lost:
      return "a GPU has fallen off the bus" + nvml + "; check 'dmesg' for Xid 79 errors, then reset the GPU or reboot";
    default:
      return "NVML could not be initialised" + nvml + "; check that 'nvidia-smi' works";
  }
}

// Why one GPU could not be read; the text reads after "GPU 3 ".
std::string explain_device_failure(const NvmlLibrary& lib, Return rc) {
  std::string nvml = " (" + lib.describe(rc) + ")";
  switch (rc) {
    case nvml::k_error_gpu_is_lost:
      return "has fallen off the bus" + nvml + "; check 'dmesg' for Xid 79 errors, then reset the GPU or reboot";
    case nvml::k_error_no_permission:
      return "cannot be opened: no permission" + nvml + " (a container or cgroup may hide it)";
    default:
      return "could not be read" + nvml;
  }
}

std::string c_string(const char* buf, std::size_t size) {
  std::size_t n = 0;
  while (n < size && buf[n] != '\0') ++n;
  return std::string(buf, n);
}

template <class Info, class Fn>
Return list_processes(Fn fn, Device device, std::vector<Info>& infos) {
  unsigned count = 32;
  Return rc = nvml::k_error_insufficient_size;
  // The list can grow between the calls; retry a few times with the size NVML asks for.
  for (int attempt = 0; attempt < 4 && rc == nvml::k_error_insufficient_size; ++attempt) {
    infos.assign(count + 8, Info{});
    unsigned n = static_cast<unsigned>(infos.size());
    rc = fn(device, &n, infos.data());
    if (rc == nvml::k_success) infos.resize(n);
    else if (rc == nvml::k_error_insufficient_size) count = n;
  }
  return rc;
}

class DeviceReader {
 public:
  explicit DeviceReader(const NvmlLibrary& lib) : m_lib(lib), m_fn(lib.fn()) {}

  // Reads one GPU or MIG device. Errors carry the explanation (without the "GPU N " label).
  Result<LiveGpu> read(Device device, LiveGpu gpu) {
    char name[nvml::k_name_buffer] = {};
    Return rc = m_fn.name(device, name, sizeof name);
    if (rc == nvml::k_error_gpu_is_lost) return make_error(ErrorCode::unavailable, explain_device_failure(m_lib, rc));
    gpu.name = rc == nvml::k_success ? c_string(name, sizeof name) : "unknown NVIDIA GPU";
    if (m_fn.uuid) {
      char uuid[nvml::k_uuid_buffer] = {};
      if (m_fn.uuid(device, uuid, sizeof uuid) == nvml::k_success) gpu.uuid = c_string(uuid, sizeof uuid);
    }
    rc = read_memory(device, gpu);
    if (rc != nvml::k_success) return make_error(ErrorCode::unavailable, explain_device_failure(m_lib, rc));
    if (m_fn.utilization) {
      nvml::Utilization u{};
      // NOT_SUPPORTED on MIG devices: utilisation stays unknown.
      if (m_fn.utilization(device, &u) == nvml::k_success) gpu.utilization_percent = static_cast<int>(u.gpu);
    }
    read_processes(device, gpu);
    return gpu;
  }

  std::vector<std::string> permission_denied;  // labels of GPUs whose processes could not be listed

 private:
  Return read_memory(Device device, LiveGpu& gpu) {
    if (m_fn.memory_v2) {
      nvml::MemoryV2 m{};
      m.version = nvml::k_memory_v2_version;
      if (m_fn.memory_v2(device, &m) == nvml::k_success) {
        // v2 separates the driver reserve; its `used` excludes it, as nvidia-smi prints.
        gpu.total_bytes = static_cast<Bytes>(m.total);
        gpu.reserved_bytes = static_cast<Bytes>(m.reserved);
        gpu.used_bytes = static_cast<Bytes>(m.used);
        gpu.free_bytes = static_cast<Bytes>(m.free);
        return nvml::k_success;
      }
    }
    nvml::Memory m{};
    Return rc = m_fn.memory(device, &m);
    if (rc != nvml::k_success) return rc;
    gpu.total_bytes = static_cast<Bytes>(m.total);
    gpu.used_bytes = static_cast<Bytes>(m.used);
    gpu.free_bytes = static_cast<Bytes>(m.free);
    return nvml::k_success;
  }

  void read_processes(Device device, LiveGpu& gpu) {
    Return rc = nvml::k_error_function_not_found;
    std::vector<nvml::ProcessInfo> infos;
    if (m_fn.processes_v3) {
      rc = list_processes(m_fn.processes_v3, device, infos);
    } else if (m_fn.processes_v2) {
      rc = list_processes(m_fn.processes_v2, device, infos);
    } else if (m_fn.processes_v1) {
      std::vector<nvml::ProcessInfoV1> old;
      rc = list_processes(m_fn.processes_v1, device, old);
      for (const auto& o : old) infos.push_back({o.pid, o.used_gpu_memory, 0, 0});
    }
    if (rc == nvml::k_error_no_permission) {
      gpu.processes_known = false;
      permission_denied.push_back(gpu.label());
      return;
    }
    if (rc != nvml::k_success) {
      gpu.processes_known = false;
      return;
    }
    for (const auto& info : infos) {
      GpuProcess p;
      p.pid = info.pid;
      if (info.used_gpu_memory == nvml::k_value_not_available) {
        p.used_bytes_known = false;
      } else {
        p.used_bytes = static_cast<Bytes>(info.used_gpu_memory);
      }
      if (m_fn.process_name) {
        char name[nvml::k_process_name_buffer] = {};
        if (m_fn.process_name(info.pid, name, sizeof name) == nvml::k_success) p.name = c_string(name, sizeof name);
      }
      gpu.processes.push_back(std::move(p));
    }
  }

  const NvmlLibrary& m_lib;
  const NvmlFunctions& m_fn;
};

}  // namespace

NvmlAttempt read_nvml(const std::string& library_path) {
  NvmlAttempt attempt;
  NvmlLibrary lib;
  attempt.load_failure = lib.open(library_path);
  if (!attempt.load_failure.empty()) return attempt;
  attempt.loaded = true;
  const NvmlFunctions& fn = lib.fn();

  Return rc = fn.init();
  if (rc != nvml::k_success) {
    attempt.result = make_error(ErrorCode::unavailable, explain_init_failure(lib, rc));
    return attempt;
  }
  lib.set_initialised();

  GpuInventory inventory;
  inventory.source = "nvml";
  if (fn.driver_version) {
    char version[nvml::k_driver_version_buffer] = {};
    if (fn.driver_version(version, sizeof version) == nvml::k_success)
      inventory.driver_version = c_string(version, sizeof version);
  }
  unsigned count = 0;
  rc = fn.device_count(&count);
  if (rc != nvml::k_success) {
    attempt.result = make_error(ErrorCode::unavailable, "NVML could not count the GPUs (" + lib.describe(rc) +
                                                            "); check that 'nvidia-smi' works");
    return attempt;
  }
  if (count == 0) {
    attempt.result = make_error(ErrorCode::unavailable, "no NVIDIA GPU found: NVML reports 0 GPUs");
    return attempt;
  }

  DeviceReader reader(lib);
  std::vector<std::string> failures;  // "GPU 1 has fallen off the bus ..."
  for (unsigned i = 0; i < count; ++i) {
    LiveGpu gpu;
    gpu.index = static_cast<int>(i);
    Device device = nullptr;
    rc = fn.handle_by_index(i, &device);
    Result<LiveGpu> read = rc == nvml::k_success
                               ? reader.read(device, gpu)
                               : Result<LiveGpu>(make_error(ErrorCode::unavailable, explain_device_failure(lib, rc)));
    if (!read) {
      failures.push_back(gpu.label() + " " + read.error().message);
      continue;
    }
    unsigned current = 0, pending = 0;
    read->mig_enabled = fn.mig_mode && fn.mig_mode(device, &current, &pending) == nvml::k_success &&
                        current == nvml::k_mig_enable;
    inventory.gpus.push_back(std::move(*read));
    if (!inventory.gpus.back().mig_enabled || !fn.max_mig_devices || !fn.mig_handle) continue;
    unsigned slots = 0;
    if (fn.max_mig_devices(device, &slots) != nvml::k_success) continue;
    for (unsigned slot = 0; slot < slots; ++slot) {
      Device mig = nullptr;
      rc = fn.mig_handle(device, slot, &mig);
      if (rc == nvml::k_error_not_found) continue;  // an empty slot
      LiveGpu mig_gpu;
      mig_gpu.index = static_cast<int>(slot);
      mig_gpu.is_mig = true;
      mig_gpu.parent_index = static_cast<int>(i);
      Result<LiveGpu> mig_read =
          rc == nvml::k_success ? reader.read(mig, mig_gpu)
                                : Result<LiveGpu>(make_error(ErrorCode::unavailable, explain_device_failure(lib, rc)));
      if (!mig_read) {
        failures.push_back(mig_gpu.label() + " " + mig_read.error().message);
        continue;
      }
      inventory.gpus.push_back(std::move(*mig_read));
    }
  }
  if (inventory.gpus.empty()) {
    attempt.result = make_error(ErrorCode::unavailable, util::join(failures, "; "));
    return attempt;
  }
  for (const auto& f : failures) inventory.warnings.push_back(f + "; it is left out");
  if (!reader.permission_denied.empty()) {
    inventory.warnings.push_back("no permission to list the processes on " + util::join(reader.permission_denied, ", ") +
                                 " (NVML: Insufficient Permissions); they are shown as unknown. Run headroom as "
                                 "root, or on the host rather than in a container, to see them");
  }
  estimate_cuda_totals(inventory.gpus);
  attempt.result = std::move(inventory);
  return attempt;
}

}  // namespace headroom::gpu
