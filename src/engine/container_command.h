// Container command lines that run vLLM: `docker run [options] IMAGE [args]` and the same with
// `podman run` (or `docker container run`). The container's options are not vLLM's; what vLLM
// receives is the image's entrypoint followed by the arguments after the image.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "headroom/error.h"

namespace headroom {

// Where the parts of a container command are, as indexes into its words.
struct ContainerCommand {
  std::size_t run_end = 0;   // the first word after `run` (where options such as `-e VAR=value` go)
  std::size_t image = 0;     // the image's word
  std::vector<std::string> env;  // -e/--env VAR=value assignments (VAR alone, from the host, is left out)
  // The command the container runs, as a vLLM command line: the --entrypoint (or the image's, `vllm
  // serve`, for vllm/vllm-openai images) followed by the words after the image.
  std::vector<std::string> vllm_words;
};

// Reads `words` (after any leading VAR=value assignments) as a container command; nullopt when the
// first word is not docker or podman followed by `run`. Errors: invalid_argument when the image is
// missing ("docker run: expected an image after the options").
Result<std::optional<ContainerCommand>> parse_container_command(const std::vector<std::string>& words);

// The words of a vLLM command line as parse_vllm_command reads them: a container command becomes
// its env assignments (VAR=value) and the vLLM command it runs; any other command is returned as is.
Result<std::vector<std::string>> unwrap_container_command(const std::vector<std::string>& words);

}  // namespace headroom
