// headroom_fake_hub: the loopback Hub as a process, for tests/cli/hub.sh and by hand.
//   headroom_fake_hub --models DIR --port-file FILE [--latency-ms N] [--token T] [--deepseek-v3]
// Writes "HUB_PORT STORAGE_PORT" to FILE once it listens; serves until stdin closes or it is killed.
// GET /__stats answers the request counts as JSON.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "fake_hub.h"

int main(int argc, char** argv) {
  std::string models, port_file, token = "hf_fake_accepted_token";
  int latency_ms = 0;
  bool deepseek = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "headroom_fake_hub: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--models") models = value();
    else if (a == "--port-file") port_file = value();
    else if (a == "--latency-ms") latency_ms = std::stoi(value());
    else if (a == "--token") token = value();
    else if (a == "--deepseek-v3") deepseek = true;
    else {
      std::fprintf(stderr, "headroom_fake_hub: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (models.empty() || port_file.empty()) {
    std::fprintf(stderr, "usage: headroom_fake_hub --models DIR --port-file FILE [--latency-ms N] [--token T] [--deepseek-v3]\n");
    return 2;
  }
  headroom::testing::FakeHub hub(token, latency_ms);
  for (auto& repo : headroom::testing::standard_fixtures(models)) hub.add_repo(std::move(repo));
  if (deepseek) hub.add_repo(headroom::testing::deepseek_v3_fixture(models));
  {
    std::ofstream out(port_file + ".tmp");
    out << hub.hub_port() << " " << hub.storage_port() << "\n";
  }
  std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  // Serve until stdin reaches EOF (the test closes it) or a signal ends the process.
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  return 0;
}
