#!/usr/bin/env bash
# Runs every program in examples/ against the mock over real HTTP, the way a user runs
# them: TEAMGAMES_API_KEY and TEAMGAMES_BASE_URL in the environment (the examples pass no
# key or URL: `new StorefrontClient()` reads both), one process each.
# Fails when an example exits non-zero or writes anything to stderr. Then runs the
# web shop's browser test (needs /usr/bin/chromium or $CHROMIUM).
# examples/*.test.ts are vitest files: `npm test` runs them.
set -euo pipefail
cd "$(dirname "$0")/.."

TSX=node_modules/.bin/tsx
work="$(mktemp -d)"
mock_pid=""
cleanup() {
  if [ -n "$mock_pid" ]; then kill "$mock_pid" 2> /dev/null || true; wait "$mock_pid" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The sandbox: the example store on a free port (the CLI prints its URL).
"$TSX" src/mock/cli.ts --port 0 > "$work/mock.log" 2>&1 &
mock_pid=$!
for _ in $(seq 1 100); do grep -q 'listening on http://' "$work/mock.log" && break; sleep 0.1; done
TEAMGAMES_BASE_URL="$(grep -o 'http://127.0.0.1:[0-9]*' "$work/mock.log" | head -n 1)"
if [ -z "$TEAMGAMES_BASE_URL" ]; then cat "$work/mock.log" >&2; echo "run-examples: the mock did not start" >&2; exit 1; fi
export TEAMGAMES_BASE_URL TEAMGAMES_API_KEY=demo-key-3f9c2a # the example store's fake key
echo "mock at $TEAMGAMES_BASE_URL"

admin() { # admin <path> [json]: a sandbox admin call (these routes exist only in the mock)
  node -e '
    const [url, body] = process.argv.slice(1);
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
      .then(async (r) => { if (!r.ok) { console.error(`admin ${url}: HTTP ${r.status} ${await r.text()}`); process.exit(1); } });
  ' "$TEAMGAMES_BASE_URL/__mock/$1" "${2:-{\}}"
}
grant() { # grant <player> <catalog id> <quantity>: a paid, undelivered purchase
  admin purchases "{\"apiKey\":\"$TEAMGAMES_API_KEY\",\"playerName\":\"$1\",\"id\":$2,\"quantity\":$3}"
}

failed=0
run() { # run <name> <command…>: output shown, stderr must stay empty
  local name="$1"; shift
  printf '\n::: example %s\n' "$name"
  local start=$SECONDS status=0
  "$@" 2> "$work/stderr" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAIL $name: exit $status" >&2; cat "$work/stderr" >&2; failed=1
  elif [ -s "$work/stderr" ]; then
    echo "FAIL $name: wrote to stderr" >&2; cat "$work/stderr" >&2; failed=1
  else
    echo "ok $name ($((SECONDS - start)) s)"
  fi
}

admin reset; grant Player123 102 1
run getting-started "$TSX" examples/getting-started.ts

admin reset; grant Player123 302 2; grant Player123 301 1
run claim-command "$TSX" examples/claim-command.ts Player123

# Exactly-once delivery waits out the 10 s window through its sleep option: with
# TEAMGAMES_SANDBOX=1 the example advances the sandbox's clock instead of sleeping.
admin reset; grant Player123 302 2; grant Player123 301 1
run deliver-command env TEAMGAMES_SANDBOX=1 "$TSX" examples/deliver-command.ts Player123

# Automatic delivery (startDeliveryLoop): about 11 s of real time (one service window after
# the join); with TEAMGAMES_SANDBOX=1 the example makes its purchases through the sandbox.
admin reset
run auto-delivery env TEAMGAMES_SANDBOX=1 "$TSX" examples/auto-delivery.ts

admin reset
run storefront-checkout "$TSX" examples/storefront-checkout.ts

admin reset; admin votes "{\"apiKey\":\"$TEAMGAMES_API_KEY\",\"playerName\":\"Player123\",\"points\":3}"
run vote-command "$TSX" examples/vote-command.ts Player123

if command -v curl > /dev/null; then
  run sandbox-session bash examples/sandbox-session.sh
else
  echo "FAIL sandbox-session: curl is not installed (apt-get install -y curl)" >&2; failed=1
fi

printf '\n::: support CLI against the sandbox\n'
admin reset; grant Player123 101 1
run cli-catalog "$TSX" src/cli/index.ts catalog --category 1 --timeout 5000
run cli-preview "$TSX" src/cli/index.ts preview Player123 --raw
run cli-claim "$TSX" src/cli/index.ts claim Player123 --yes

run web-shop-e2e "$TSX" examples/web-shop/e2e.ts

if [ "$failed" -ne 0 ]; then echo $'\nrun-examples: FAILED' >&2; exit 1; fi
echo $'\nrun-examples: every example passed'
