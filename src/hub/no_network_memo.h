// headroom's memory of an unreachable Hub. When no connection to the Hub could be made (the name
// did not resolve, or nothing answered within the connect timeout), <cache_dir>/no-network records
// the endpoint and what failed, and for HubSettings::no_network_memo_s seconds after that (60 by
// default, HEADROOM_HUB_RETRY_AFTER_S) the next commands fall back at once, as they would after
// the attempt, without loading libcurl or waiting for the network. The first answer from the Hub
// removes the file. Internal to src/hub/.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "headroom/hub.h"

namespace headroom::hub::detail {

// A transport that answers every request as the remembered failure, saying when it was seen; or
// null when the Hub at s.endpoint was not found unreachable within the last no_network_memo_s.
std::shared_ptr<HttpTransport> remembered_no_network(const HubSettings& s);

// After a round of requests to the Hub: remember that it was unreachable (every request failed to
// resolve or connect), or forget it (any request got an answer).
void note_reachability(const HubSettings& s, const std::vector<HttpResult>& results);

}  // namespace headroom::hub::detail
