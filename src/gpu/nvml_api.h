// The part of the NVML C API headroom uses, declared here so that building needs no NVIDIA
// headers. Values and layouts are those of nvml.h (CUDA 11.x/12.x): return codes are the
// nvmlReturn_t enum, structs keep nvml.h's field order and natural alignment.
#pragma once

namespace headroom::nvml {

using Return = int;                 // nvmlReturn_t
using Device = struct DeviceSt*;    // nvmlDevice_t (opaque)

inline constexpr Return k_success = 0;
inline constexpr Return k_error_uninitialized = 1;
inline constexpr Return k_error_invalid_argument = 2;
inline constexpr Return k_error_not_supported = 3;
inline constexpr Return k_error_no_permission = 4;
inline constexpr Return k_error_already_initialized = 5;
inline constexpr Return k_error_not_found = 6;
inline constexpr Return k_error_insufficient_size = 7;
inline constexpr Return k_error_driver_not_loaded = 9;
inline constexpr Return k_error_timeout = 10;
inline constexpr Return k_error_library_not_found = 12;
inline constexpr Return k_error_function_not_found = 13;
inline constexpr Return k_error_corrupted_inforom = 14;
inline constexpr Return k_error_gpu_is_lost = 15;
inline constexpr Return k_error_reset_required = 16;
inline constexpr Return k_error_operating_system = 17;
inline constexpr Return k_error_lib_rm_version_mismatch = 18;
inline constexpr Return k_error_in_use = 19;
inline constexpr Return k_error_memory = 20;
inline constexpr Return k_error_no_data = 21;
inline constexpr Return k_error_unknown = 999;

// NVML_DEVICE_MIG_ENABLE
inline constexpr unsigned k_mig_enable = 1;
// NVML_VALUE_NOT_AVAILABLE: usedGpuMemory when the driver cannot say (WDDM, some MIG setups).
inline constexpr unsigned long long k_value_not_available = ~0ULL;
// Buffer sizes: NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE,
// NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE; process names are paths.
inline constexpr unsigned k_name_buffer = 96;
inline constexpr unsigned k_uuid_buffer = 96;
inline constexpr unsigned k_driver_version_buffer = 80;
inline constexpr unsigned k_process_name_buffer = 256;

struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct MemoryV2 {  // nvmlMemory_v2_t
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// nvmlMemory_v2 = NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | (2 << 24)
inline constexpr unsigned k_memory_v2_version = static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24);

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};

struct ProcessInfoV1 {  // nvmlProcessInfo_v1_t: nvmlDeviceGetComputeRunningProcesses
  unsigned int pid;
  unsigned long long used_gpu_memory;
};

struct ProcessInfo {  // nvmlProcessInfo_t (= _v2_t): the _v2 and _v3 entry points
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

static_assert(sizeof(MemoryV2) == 40, "nvmlMemory_v2_t layout");
static_assert(sizeof(ProcessInfoV1) == 16, "nvmlProcessInfo_v1_t layout");
static_assert(sizeof(ProcessInfo) == 24, "nvmlProcessInfo_t layout");

}  // namespace headroom::nvml
