// `headroom gpus`: the live GPUs of this host (memory, utilisation, processes), or with --catalog
// the built-in GPU catalogue.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "headroom/gpu.h"
#include "headroom/gpu_json.h"
#include "headroom/gpu_probe.h"
#include "util/strings.h"

namespace headroom::cli {
namespace {

using nlohmann::json;

std::string gib(Bytes b) { return util::fixed(to_gib(b), 2); }

// Prints rows as left-aligned columns (numeric columns right-aligned), two spaces apart.
void print_table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right_aligned) {
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::string pad(width[i] - r[i].size(), ' ');
      std::string cell = right_aligned[i] ? pad + r[i] : r[i] + (i + 1 < r.size() ? pad : "");
      line += (i ? "  " : "") + cell;
    }
    std::printf("%s\n", line.c_str());
  }
}

std::string column_label(const LiveGpu& g) {
  return g.is_mig ? std::to_string(g.parent_index) + " MIG " + std::to_string(g.index) : std::to_string(g.index);
}

void print_live_text(const GpuInventory& inv) {
  std::printf("%zu GPU device%s (read with %s%s)\n\n", inv.gpus.size(), inv.gpus.size() == 1 ? "" : "s",
              inv.source.c_str(), inv.driver_version.empty() ? "" : (", driver " + inv.driver_version).c_str());
  std::vector<std::vector<std::string>> rows = {
      {"GPU", "NAME", "UUID", "TOTAL GiB", "USED GiB", "FREE GiB", "CUDA GiB", "UTIL"}};
  for (const auto& g : inv.gpus) {
    rows.push_back({column_label(g), g.name + (g.mig_enabled ? " (MIG mode)" : ""), g.uuid.empty() ? "-" : g.uuid,
                    gib(g.total_bytes), gib(g.used_bytes), gib(g.free_bytes), gib(g.cuda_total_bytes),
                    g.utilization_percent < 0 ? "-" : std::to_string(g.utilization_percent) + "%"});
  }
  print_table(rows, {false, false, false, true, true, true, true, true});

  std::vector<std::vector<std::string>> procs = {{"GPU", "PID", "PROCESS", "GPU MEMORY"}};
  std::vector<std::string> unknown;
  for (const auto& g : inv.gpus) {
    if (g.mig_enabled) continue;  // its processes are listed under its MIG devices
    if (!g.processes_known) unknown.push_back(g.label());
    for (const auto& p : g.processes) {
      procs.push_back({column_label(g), std::to_string(p.pid), p.name.empty() ? "?" : p.name,
                       p.used_bytes_known ? gib(p.used_bytes) + " GiB" : "unknown"});
    }
  }
  std::printf("\n");
  if (procs.size() > 1) print_table(procs, {false, true, false, true});
  else if (unknown.empty()) std::printf("No process holds GPU memory.\n");
  if (!unknown.empty()) std::printf("Processes on %s: unknown (not allowed to list them).\n", util::join(unknown, ", ").c_str());
}

void print_catalog_text(const GpuCatalog& catalog) {
  std::vector<std::vector<std::string>> rows = {{"KEY", "NAME", "CUDA GiB", "SMI MiB", "ARCH", "ALIASES"}};
  for (const auto& g : catalog.all()) {
    rows.push_back({g.key, g.name, gib(g.total_bytes),
                    g.nvml_total_bytes ? std::to_string(*g.nvml_total_bytes / k_mib) : "-", g.architecture,
                    util::join(g.aliases, ", ")});
  }
  print_table(rows, {false, false, true, true, false, false});
}

}  // namespace

int run_gpus(const Args& args) {
  CLI::App app{"List the GPUs of this host: memory, utilisation and the processes holding memory.\n"
               "Reads NVML (libnvidia-ml.so.1; $HEADROOM_NVML_LIBRARY overrides the path) or, without it,\n"
               "nvidia-smi ($HEADROOM_NVIDIA_SMI overrides the path).",
               "headroom gpus"};
  std::string format_text = "text";
  bool catalog = false;
  app.add_option("--format", format_text, "output format: text or json");
  app.add_flag("--catalog", catalog, "list the built-in GPU catalogue (names for --gpu) instead of live GPUs");
  if (auto rc = parse_or_exit(app, args, "gpus")) return *rc;
  auto format = parse_format(format_text);
  if (!format) {
    print_error(format.error());
    return k_exit_usage;
  }

  if (catalog) {
    const auto& c = GpuCatalog::builtin();
    if (*format == Format::json) std::printf("%s\n", gpu_catalog_to_json(c).dump(2).c_str());
    else print_catalog_text(c);
    return k_exit_ok;
  }

  auto inventory = probe_gpus();
  if (!inventory) {
    print_error(inventory.error().to_string() +
                "\nTo plan without a GPU, name one with --gpu NAME ('headroom gpus --catalog' lists them).");
    return k_exit_failure;
  }
  for (const auto& w : inventory->warnings) print_warning(w);
  if (*format == Format::json) std::printf("%s\n", gpu_inventory_to_json(*inventory).dump(2).c_str());
  else print_live_text(*inventory);
  return k_exit_ok;
}

}  // namespace headroom::cli
