// `docker run` / `podman run` lines that start vLLM: the container options are skipped (their
// values too, so `-v /models:/models` is not taken for a model), `-e VAR=value` is kept as the run's
// environment, and the words after the image are the vLLM command. The option tables are Docker's
// `docker run --help` (Docker 27) and Podman's `podman run --help` (Podman 5); a boolean option is
// one not listed, which is right for every other documented option.
#include "engine/container_command.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string_view>

namespace headroom {

namespace {

// Long options that take a value as the next word (or after '=').
constexpr std::string_view k_value_options[] = {
    "--add-host", "--annotation", "--arch", "--attach", "--authfile", "--blkio-weight", "--blkio-weight-device",
    "--cap-add", "--cap-drop", "--cert-dir", "--cgroup-conf", "--cgroup-parent", "--cgroupns", "--cgroups",
    "--chrootdirs", "--cidfile", "--conmon-pidfile", "--cpu-count", "--cpu-percent", "--cpu-period", "--cpu-quota",
    "--cpu-rt-period", "--cpu-rt-runtime", "--cpu-shares", "--cpus", "--cpuset-cpus", "--cpuset-mems", "--creds",
    "--decryption-key", "--detach-keys", "--device", "--device-cgroup-rule", "--device-read-bps",
    "--device-read-iops", "--device-write-bps", "--device-write-iops", "--dns", "--dns-opt", "--dns-option",
    "--dns-search", "--domainname", "--entrypoint", "--env", "--env-file", "--expose", "--gidmap", "--gpus",
    "--group-add", "--group-entry", "--health-cmd", "--health-interval", "--health-log-destination",
    "--health-max-log-count", "--health-max-log-size", "--health-on-failure", "--health-retries",
    "--health-start-interval", "--health-start-period", "--health-startup-cmd", "--health-timeout", "--hooks-dir",
    "--hostname", "--hostuser", "--image-volume", "--init-path", "--io-maxbandwidth", "--io-maxiops", "--ip",
    "--ip6", "--ipc", "--isolation", "--kernel-memory", "--label", "--label-file", "--link", "--link-local-ip",
    "--log-driver", "--log-opt", "--mac-address", "--memory", "--memory-reservation", "--memory-swap",
    "--memory-swappiness", "--mount", "--name", "--net", "--network", "--network-alias", "--oom-score-adj", "--os",
    "--passwd-entry", "--personality", "--pid", "--pidfile", "--pids-limit", "--platform", "--pod", "--pod-id-file",
    "--preserve-fds", "--publish", "--pull", "--rdt-class", "--requires", "--restart", "--retry", "--retry-delay",
    "--runtime", "--sdnotify", "--seccomp-policy", "--secret", "--security-opt", "--shm-size", "--shm-size-systemd",
    "--stop-signal", "--stop-timeout", "--storage-opt", "--subgidname", "--subuidname", "--sysctl", "--timeout",
    "--tmpfs", "--uidmap", "--ulimit", "--umask", "--unsetenv", "--user", "--userns", "--uts", "--variant",
    "--volume", "--volume-driver", "--volumes-from", "--workdir"};

// Short options that take a value: -a (attach), -c (cpu shares), -e, -h (hostname), -l (label),
// -m (memory), -p (publish), -u (user), -v (volume), -w (workdir).
constexpr std::string_view k_short_value_options = "acehlmpuvw";

bool is_value_option(std::string_view name) {
  return std::find(std::begin(k_value_options), std::end(k_value_options), name) != std::end(k_value_options);
}

bool is_program(const std::string& word, std::string_view name) {
  return word == name || (word.size() > name.size() && word.ends_with(name) && word[word.size() - name.size() - 1] == '/');
}

// Whether the image ships vLLM's OpenAI server as its entrypoint: vllm/vllm-openai (Docker Hub,
// any registry or mirror prefix, any tag) and its ROCm and CPU variants (vllm-openai-rocm, ...).
bool is_vllm_openai_image(const std::string& image) {
  std::string name = image.substr(0, image.find('@'));
  auto slash = name.rfind('/');
  auto colon = name.find(':', slash == std::string::npos ? 0 : slash);
  name = name.substr(0, colon);
  std::string last = slash == std::string::npos ? name : name.substr(slash + 1);
  return last.starts_with("vllm-openai");
}

bool is_env_word(const std::string& s) {
  auto eq = s.find('=');
  return eq != std::string::npos && eq > 0 && s[0] != '-';
}

// VAR=value with a variable name as vLLM's environment variables are spelled (upper case).
bool is_upper_env_word(const std::string& s) {
  auto eq = s.find('=');
  return is_env_word(s) && std::all_of(s.begin(), s.begin() + static_cast<long>(eq), [](char c) {
           return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
         });
}

// Reads one option at words[i] into `out`; returns the index after it (and its value).
std::size_t read_option(const std::vector<std::string>& words, std::size_t i, ContainerCommand& out,
                        std::string& entrypoint) {
  const std::string& w = words[i];
  std::string name = w, value;
  bool has_value = false;
  std::size_t next = i + 1;
  if (w.starts_with("--")) {
    if (auto eq = w.find('='); eq != std::string::npos) {
      name = w.substr(0, eq);
      value = w.substr(eq + 1);
      has_value = true;
    } else if (is_value_option(w) && next < words.size()) {
      value = words[next++];
      has_value = true;
    }
  } else {
    // A group of short options (-it, -dit); the first one that takes a value ends the group and
    // takes the rest of the word, or the next word.
    for (std::size_t k = 1; k < w.size(); ++k) {
      if (k_short_value_options.find(w[k]) == std::string_view::npos) continue;
      name = std::string("-") + w[k];
      if (k + 1 < w.size()) value = w.substr(k + 1);
      else if (next < words.size()) value = words[next++];
      has_value = true;
      break;
    }
  }
  if (!has_value) return next;
  if ((name == "-e" || name == "--env") && is_env_word(value)) out.env.push_back(value);
  if (name == "--entrypoint") entrypoint = value;
  return next;
}

}  // namespace

Result<std::optional<ContainerCommand>> parse_container_command(const std::vector<std::string>& words) {
  std::size_t i = 0;
  while (i < words.size() && is_env_word(words[i])) ++i;
  if (i >= words.size() || !(is_program(words[i], "docker") || is_program(words[i], "podman"))) return std::nullopt;
  const std::string program = words[i].substr(words[i].rfind('/') + 1);
  ++i;
  if (i < words.size() && words[i] == "container") ++i;
  if (i >= words.size() || words[i] != "run") return std::nullopt;
  ContainerCommand out;
  out.run_end = ++i;
  std::string entrypoint;
  while (i < words.size() && words[i].size() > 1 && words[i][0] == '-') {
    if (words[i] == "--") {
      ++i;
      break;
    }
    i = read_option(words, i, out, entrypoint);
  }
  if (i >= words.size())
    return make_error(ErrorCode::invalid_argument, "expected an image after the options", program + " run");
  out.image = i;
  std::vector<std::string> rest(words.begin() + static_cast<long>(i) + 1, words.end());
  if (!entrypoint.empty()) {
    out.vllm_words.push_back(entrypoint);
  } else if (is_vllm_openai_image(words[i]) && !(rest.size() > 0 && (is_program(rest[0], "vllm") || rest[0].starts_with("python")))) {
    // vLLM's Dockerfile (vllm-openai stage): ENTRYPOINT ["vllm", "serve"]; older images ran
    // python3 -m vllm.entrypoints.openai.api_server, which takes the same arguments.
    out.vllm_words = {"vllm", "serve"};
  }
  out.vllm_words.insert(out.vllm_words.end(), rest.begin(), rest.end());
  return out;
}

Result<std::vector<std::string>> unwrap_container_command(const std::vector<std::string>& words) {
  auto container = parse_container_command(words);
  if (!container) return tl::unexpected(container.error());
  if (!*container) return words;
  // `VAR=value docker run ...` sets the client's environment, not the container's: only -e reaches vLLM.
  std::vector<std::string> out;
  for (const auto& e : (*container)->env)
    if (is_upper_env_word(e)) out.push_back(e);
  out.insert(out.end(), (*container)->vllm_words.begin(), (*container)->vllm_words.end());
  return out;
}

}  // namespace headroom
