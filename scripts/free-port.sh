#!/usr/bin/env bash
# Prints a TCP port on 127.0.0.1 that is free right now (the kernel picks it), for the scripts
# that start a broker, the daemon's HTTP server or Prometheus beside each other.
exec python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
