// Two private members of cpp-httplib 0.11's Server that `serve` needs to hand a connection to it
// only once the request's head has arrived (connection_pool.h): the listening socket, and the
// function that answers the requests on one accepted socket. cpp-httplib keeps both private and
// offers no way to serve a socket accepted elsewhere. An explicit template instantiation may name
// private members (C++20 [temp.spec.general]/6); the friend functions below return pointers to them.
#pragma once

#include <httplib.h>

#include <atomic>

namespace headroom::server::httplib_access {

struct ListenSocket {
  using type = std::atomic<socket_t> httplib::Server::*;
  friend type get(ListenSocket);
};
struct ProcessSocket {
  using type = bool (httplib::Server::*)(socket_t);
  friend type get(ProcessSocket);
};

template <class Tag, typename Tag::type Member>
struct Expose {
  friend typename Tag::type get(Tag) { return Member; }
};

template struct Expose<ListenSocket, &httplib::Server::svr_sock_>;
template struct Expose<ProcessSocket, &httplib::Server::process_and_close_socket>;

// The socket bind_to_port opened (INVALID_SOCKET before).
inline std::atomic<socket_t>& listen_socket(httplib::Server& s) { return s.*get(ListenSocket{}); }

// Answers the requests on `sock` with the server's routes and closes it (what httplib's own accept
// loop does on its worker threads). `s` must be a plain httplib::Server: the call is virtual.
inline bool process_and_close(httplib::Server& s, socket_t sock) { return (s.*get(ProcessSocket{}))(sock); }

}  // namespace headroom::server::httplib_access
