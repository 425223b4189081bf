#!/usr/bin/env bash
# What `npm test` runs: installs the servers the tests need when they are missing (Debian packages),
# starts them on loopback ports chosen here, runs vitest, and always stops them.
#   MDS_TEST_KAFKA_BROKERS  librdkafka's Kafka-protocol mock cluster, started by kcat
#   MDS_TEST_REDIS_URL      a throwaway redis-server
# and Debian's chromium for the page tests.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v kcat >/dev/null || missing+=(kcat)
command -v redis-server >/dev/null || missing+=(redis-server)
# Page tests drive Debian's chromium through playwright-core (test/support/browser.ts).
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test/run.sh: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The tests' stores, data directories and servers' files go to memory (a tmpfs) unless TMPDIR says
# otherwise: each insert writes a part per materialized view, and on the disk that file work cost a
# sixth of a store file's CPU and the suite a sixth of its time (test/bench/RESULTS.md, 2026-12-03).
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
  TMPDIR=$(mktemp -d -p /dev/shm mds-test.XXXXXX)
  export TMPDIR
  shm_tmp=$TMPDIR
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
  [ -z "${shm_tmp:-}" ] || rm -rf "$shm_tmp"
}
trap cleanup EXIT

# The mock cluster lives as long as this idle kcat consumer; it prints the address it listens on.
kcat -b mock:1 -X test.mock.num.brokers=1 -X debug=mock -C -q -t mds-test-idle </dev/null >"$work/kcat.log" 2>&1 &
pids+=($!)
brokers=""
for _ in $(seq 1 100); do
  brokers=$(grep -o 'bootstrap.servers=[0-9.:]*' "$work/kcat.log" | head -n1 | cut -d= -f2 || true)
  [ -n "$brokers" ] && break
  sleep 0.2
done
[ -n "$brokers" ] || { echo "test/run.sh: the Kafka mock cluster did not start:" >&2; cat "$work/kcat.log" >&2; exit 1; }

redis_port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >"$work/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
redis-cli -p "$redis_port" ping >/dev/null || { echo "test/run.sh: redis-server did not start:" >&2; cat "$work/redis.log" >&2; exit 1; }

export MDS_TEST_KAFKA_BROKERS="$brokers"
export MDS_TEST_REDIS_URL="redis://127.0.0.1:$redis_port"
echo "test/run.sh: kafka mock at $MDS_TEST_KAFKA_BROKERS, redis at $MDS_TEST_REDIS_URL" >&2

status=0
npx vitest run "$@" || status=$?
exit $status
