#!/usr/bin/env bash
# Install everything into .venv and run the whole test suite twice: embedded (SQLite, Celery eager) and
# on PostgreSQL with a real Celery worker on Redis. Extra arguments go to pytest (e.g. -k import).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $PYTHON"
  "$PYTHON" -m venv .venv
fi
echo "== installing requirements-dev.txt"
# uv installs the same pinned requirements as pip in about 40% of its time (parallel downloads and bytecode
# compilation); it does not read pip's configuration, so pip's find-links (a folder of wheels, such as a CPU build
# of torch) are passed on. Should uv fail, pip installs as before.
PIP_LINKS=$(.venv/bin/pip config list 2>/dev/null | sed -n "s/^[a-z.]*find-links='\(.*\)'$/\1/p")
UV_INSTALL=(.venv/bin/uv pip install --quiet --python .venv/bin/python --compile-bytecode)
for dir in ${PIP_FIND_LINKS:-} $PIP_LINKS; do UV_INSTALL+=(--find-links "$dir"); done
if ! { .venv/bin/pip install --quiet --disable-pip-version-check uv==0.13.9 &&
       "${UV_INSTALL[@]}" -r requirements-dev.txt; }; then
  echo "   uv did not install them: pip"
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "== installing Chromium for the browser tests (Debian package)"
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "   not root or no apt-get: the browser tests will be skipped"
  fi
fi

echo "== services"
bash scripts/services.sh

# Bytecode is written (ignored by git): pytest's assertion rewriting of the ~580 test modules is half of each test
# process's collection, and the second pass and every subprocess reuse what the first compiled.

# Each run gets its own storage and SQLite folder, so a test run never touches your data.
export KGPOOL_VAR_DIR=$(mktemp -d /tmp/kgpool-test-XXXXXX)
trap 'rm -rf "$KGPOOL_VAR_DIR"' EXIT

# Tests run in parallel processes (pytest-xdist), one per core by default; KGPOOL_TEST_WORKERS=1 runs them in this
# process. Each process has its own test database (pytest-django adds _gw0, _gw1...), queues and temporary files.
WORKERS=${KGPOOL_TEST_WORKERS:-$(nproc 2>/dev/null || echo 1)}
PARALLEL=()
if [ "$WORKERS" -gt 1 ]; then PARALLEL=(-n "$WORKERS"); fi

# A test skipped for a reason not allowed in tests/allowed_skips.txt fails the pass (tests/_allowed_skips.py;
# pytest.ini's -ra lists every skip with its reason).
ALLOWED_SKIPS=always
[ -x /usr/bin/chromium ] || ALLOWED_SKIPS=$ALLOWED_SKIPS,no-chromium

echo "== tests on SQLite (embedded default, Celery eager)"
KGPOOL_ALLOWED_SKIPS=$ALLOWED_SKIPS,sqlite \
  env -u DATABASE_URL -u CELERY_BROKER_URL .venv/bin/python -m pytest "${PARALLEL[@]}" "$@"

echo "== tests on PostgreSQL, real Celery worker on Redis (the tests that use the database)"
KGPOOL_ALLOWED_SKIPS=$ALLOWED_SKIPS KGPOOL_ONLY_DATABASE_TESTS=1 \
DATABASE_URL=${KGPOOL_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/kgpool} \
KGPOOL_TEST_BROKER_URL=${KGPOOL_TEST_BROKER_URL:-redis://127.0.0.1:6379/15} \
  env -u CELERY_BROKER_URL .venv/bin/python -m pytest "${PARALLEL[@]}" "$@"
