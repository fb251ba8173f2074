// Reading GPUs through nvidia-smi's CSV queries, for hosts where libnvidia-ml.so.1 cannot be loaded
// by headroom (a static container image, an unusual library path) but nvidia-smi works.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu/gpu_sources.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace headroom::gpu {
namespace {

constexpr const char* k_query_gpu =
    "--query-gpu=index,name,uuid,memory.total,memory.used,memory.free,utilization.gpu,driver_version";
constexpr const char* k_query_apps = "--query-compute-apps=gpu_uuid,pid,process_name,used_memory";
constexpr const char* k_csv = "--format=csv,noheader,nounits";

// "[N/A]", "[Not Supported]", "[Insufficient Permissions]", "N/A" or empty: nvidia-smi's ways of
// saying it does not know.
bool is_unknown(const std::string& field) {
  return field.empty() || field == "N/A" || (field.front() == '[' && field.back() == ']');
}

// A number, or nullopt when nvidia-smi does not know; an error for anything else.
Result<std::optional<double>> number(const std::string& field, const std::string& what, int line) {
  if (is_unknown(field)) return std::optional<double>();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(field.c_str(), &end);
  if (end == field.c_str() || *end != '\0' || errno != 0 || v < 0)
    return make_error(ErrorCode::parse_error, "expected a number for " + what + ", got '" + field + "'",
                      "nvidia-smi output line " + std::to_string(line));
  return std::optional<double>(v);
}

Bytes mib(double v) { return static_cast<Bytes>(std::llround(v * static_cast<double>(k_mib))); }

// Splits a CSV line and trims each field. Names with commas are not expected, but the callers
// rejoin the surplus fields into the free-text column so that one would survive.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  for (const auto& f : util::split(line, ',')) out.push_back(util::trim(f));
  return out;
}

std::string rejoin(const std::vector<std::string>& f, std::size_t first, std::size_t last) {
  std::vector<std::string> parts(f.begin() + static_cast<long>(first), f.begin() + static_cast<long>(last));
  return util::join(parts, ", ");
}

// What a failing nvidia-smi means, from what it printed.
std::string explain_failure(const util::ProgramOutput& out, const std::string& program) {
  std::string text = util::trim(out.out + "\n" + out.err);
  std::string first_line = util::trim(util::split(text, '\n').front());
  std::string quoted = " (" + program + ": " + first_line + ")";
  if (text.find("No devices were found") != std::string::npos)
    return "no NVIDIA GPU found: " + program + " says '" + first_line + "'";
  if (text.find("couldn't communicate with the NVIDIA driver") != std::string::npos || out.exit_status == 9)
    return "the NVIDIA kernel driver is not loaded" + quoted +
           "; load it with 'sudo modprobe nvidia' and check that 'nvidia-smi' works";
  if (text.find("version mismatch") != std::string::npos)
    return "the NVIDIA kernel driver and libnvidia-ml.so.1 come from different driver versions" + quoted +
           ", usually after a driver upgrade without a reboot; reboot, or reinstall the driver so that both match";
  if (text.find("fallen off the bus") != std::string::npos || out.exit_status == 15)
    return "a GPU has fallen off the bus" + quoted + "; check 'dmesg' for Xid 79 errors, then reset the GPU or reboot";
  return program + " failed with exit status " + std::to_string(out.exit_status) +
         (first_line.empty() ? std::string() : ": " + first_line);
}

}  // namespace

Result<std::vector<LiveGpu>> parse_nvidia_smi_gpus(std::string_view csv, std::string* driver_version) {
  std::vector<LiveGpu> gpus;
  int line_no = 0;
  for (const auto& raw : util::split(csv, '\n')) {
    ++line_no;
    std::string line = util::trim(raw);
    if (line.empty()) continue;
    auto f = fields_of(line);
    if (f.size() < 8)
      return make_error(ErrorCode::parse_error,
                        "expected 8 comma-separated fields (index, name, uuid, memory.total, memory.used, "
                        "memory.free, utilization.gpu, driver_version), got " + std::to_string(f.size()),
                        "nvidia-smi output line " + std::to_string(line_no));
    const std::size_t n = f.size();
    LiveGpu gpu;
    auto index = number(f[0], "index", line_no);
    if (!index) return tl::unexpected(index.error());
    if (!*index)
      return make_error(ErrorCode::parse_error, "expected a GPU index, got '" + f[0] + "'",
                        "nvidia-smi output line " + std::to_string(line_no));
    gpu.index = static_cast<int>(**index);
    gpu.name = rejoin(f, 1, n - 6);
    gpu.uuid = is_unknown(f[n - 6]) ? std::string() : f[n - 6];
    auto total = number(f[n - 5], "memory.total", line_no);
    auto used = number(f[n - 4], "memory.used", line_no);
    auto free = number(f[n - 3], "memory.free", line_no);
    auto util_pct = number(f[n - 2], "utilization.gpu", line_no);
    for (const auto* r : {&total, &used, &free, &util_pct})
      if (!*r) return tl::unexpected(r->error());
    if (!*total)
      return make_error(ErrorCode::parse_error, "expected MiB for memory.total, got '" + f[n - 5] + "'",
                        "nvidia-smi output line " + std::to_string(line_no));
    gpu.total_bytes = mib(**total);
    // When one of used/free is unknown, it follows from the other; both unknown reads as idle.
    if (*used) gpu.used_bytes = mib(**used);
    if (*free) gpu.free_bytes = mib(**free);
    if (*used && !*free) gpu.free_bytes = std::max<Bytes>(0, gpu.total_bytes - gpu.used_bytes);
    if (!*used && *free) gpu.used_bytes = std::max<Bytes>(0, gpu.total_bytes - gpu.free_bytes);
    if (!*used && !*free) gpu.free_bytes = gpu.total_bytes;
    if (*util_pct) gpu.utilization_percent = static_cast<int>(std::lround(**util_pct));
    if (driver_version && driver_version->empty() && !is_unknown(f[n - 1])) *driver_version = f[n - 1];
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

Result<void> parse_nvidia_smi_apps(std::string_view csv, std::vector<LiveGpu>& gpus) {
  int line_no = 0;
  for (const auto& raw : util::split(csv, '\n')) {
    ++line_no;
    std::string line = util::trim(raw);
    // Some versions print a sentence instead of an empty list.
    if (line.empty() || line.rfind("No running", 0) == 0) continue;
    auto f = fields_of(line);
    if (f.size() < 4)
      return make_error(ErrorCode::parse_error,
                        "expected 4 comma-separated fields (gpu_uuid, pid, process_name, used_memory), got " +
                            std::to_string(f.size()),
                        "nvidia-smi output line " + std::to_string(line_no));
    const std::size_t n = f.size();
    auto pid = number(f[1], "pid", line_no);
    if (!pid) return tl::unexpected(pid.error());
    auto used = number(f[n - 1], "used_memory", line_no);
    if (!used) return tl::unexpected(used.error());
    GpuProcess p;
    p.pid = *pid ? static_cast<unsigned>(**pid) : 0;
    std::string name = rejoin(f, 2, n - 1);
    p.name = is_unknown(name) ? std::string() : name;
    if (*used) p.used_bytes = mib(**used);
    else p.used_bytes_known = false;
    for (auto& gpu : gpus) {
      if (!gpu.uuid.empty() && gpu.uuid == f[0]) {
        gpu.processes.push_back(p);
        break;
      }
    }
  }
  return {};
}

Result<GpuInventory> read_nvidia_smi(const std::string& program) {
  auto out = util::run_program(program, {k_query_gpu, k_csv});
  if (!out) return tl::unexpected(out.error());
  if (out->exit_status != 0) return make_error(ErrorCode::unavailable, explain_failure(*out, program));
  GpuInventory inventory;
  inventory.source = "nvidia-smi";
  auto gpus = parse_nvidia_smi_gpus(out->out, &inventory.driver_version);
  if (!gpus) return tl::unexpected(gpus.error());
  if (gpus->empty()) return make_error(ErrorCode::unavailable, "no NVIDIA GPU found: nvidia-smi lists no GPUs");
  inventory.gpus = std::move(*gpus);

  auto apps = util::run_program(program, {k_query_apps, k_csv});
  Result<void> parsed;
  if (apps && apps->exit_status == 0) parsed = parse_nvidia_smi_apps(apps->out, inventory.gpus);
  if (!apps || apps->exit_status != 0 || !parsed) {
    for (auto& gpu : inventory.gpus) {
      gpu.processes.clear();
      gpu.processes_known = false;
    }
    std::string why = !apps ? apps.error().to_string()
                      : apps->exit_status != 0 ? explain_failure(*apps, program)
                                               : parsed.error().to_string();
    inventory.warnings.push_back("the processes on the GPUs could not be listed (" + why +
                                 "); they are shown as unknown");
  }
  estimate_cuda_totals(inventory.gpus);
  return inventory;
}

}  // namespace headroom::gpu
