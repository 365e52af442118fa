#!/usr/bin/env bash
# Make sure PostgreSQL, Redis and RabbitMQ answer on localhost; start the ones that don't.
# The start commands are this machine's (Debian packages); elsewhere, start your own services and set the URLs.
set -uo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  local name=$1 port=$2
  for _ in $(seq 1 60); do port_open "$port" && return 0; sleep 1; done
  echo "services: $name did not come up on port $port" >&2
  return 1
}

ensure() {
  local name=$1 port=$2; shift 2
  if port_open "$port"; then echo "services: $name is up (port $port)"; return 0; fi
  echo "services: starting $name"
  "$@" >/dev/null 2>&1 || true
  wait_port "$name" "$port" && echo "services: $name started (port $port)"
}

status=0
ensure PostgreSQL 5432 bash -c 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start' || status=1
ensure Redis 6379 redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
  --dir /var/lib/redis --logfile /var/log/redis/ci.log || status=1
ensure RabbitMQ 5672 rabbitmq-server -detached || status=1
exit $status
