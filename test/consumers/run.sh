#!/usr/bin/env bash
# After `npm run build`: consumer projects built from the packed tarball. Each kind is a
# fresh temp project that installs the tarball (without msw, but for ts-bundler) and runs
# a small program using the main entry and teamgames-sdk/mock:
#   ts-node16    TypeScript, module node16 (ESM), skipLibCheck false, no msw: tsc type-checks
#                our declarations too and compiles, node runs
#   ts-bundler   TypeScript, moduleResolution bundler, module esnext; skipLibCheck false, msw
#   ts-commonjs  TypeScript, module commonjs (node10 resolution, typesVersions), skipLibCheck
#                false, no msw, compiled to require()
#   cjs          plain CommonJS (.cjs, require)
#   esm          plain ESM (.mjs, import)
#   bun, deno    the runtimes from the npm registry (bun@1, deno@2): the TS program as is,
#                the README quick start against the packed teamgames-mock over HTTP, both
#                CLIs, and (deno) that `import 'teamgames-sdk/mock'` exits by itself and
#                that without --allow-env the constructor names --allow-env
# Usage: test/consumers/run.sh [kind ...]   (default: every kind, in the order above)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
mock_pid=""
cleanup() {
  if [ -n "$mock_pid" ]; then kill "$mock_pid" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(ts-node16 ts-bundler ts-commonjs cjs esm bun deno)

# No program may hang CI: each gets a time limit (seconds), and fails when it runs out.
limit=120
export NO_COLOR=1
tsc=(node "$root/node_modules/typescript/bin/tsc")
types_node="@types/node@$(node -p "require('$root/node_modules/@types/node/package.json').version")"
api_key=demo-key-3f9c2a # exampleSeed's first server

fail() {
  echo "consumers: $*" >&2
  exit 1
}
now() { date +%s%N; }
took() { awk -v ns="$(($(now) - $1))" 'BEGIN { printf "%.1f", ns / 1e9 }'; }
install() { npm install --silent --no-audit --no-fund --prefer-offline "$work/$tarball" "$@"; }

# A fresh project for one kind: a copy of its directory here, the tarball and "$@" installed.
project() {
  local kind="$1"
  shift
  cp -R "$here/$kind" "$work/$kind"
  cd "$work/$kind"
  install "$@"
}

# Runs a program with the time limit ($seconds, default $limit), naming what ran out.
limited() {
  local what="$1" status=0 seconds="${seconds:-$limit}"
  shift
  timeout "$seconds" "$@" || status=$?
  [ "$status" -ne 124 ] || fail "$what: still running after ${seconds} s (something keeps the event loop alive)"
  [ "$status" -eq 0 ] || fail "$what: exit code $status"
}

typescript() {
  local kind="$1" extra=()
  # Every TS kind type-checks our .d.ts files (skipLibCheck false). ts-bundler is a web
  # project with vitest and msw (lib dom, which msw's types need): mock.handlers typed with
  # msw's HttpHandler; the others have no msw, where the import msw is ignored
  # (scripts/optional-peer-types.ts) and mock.handlers is any[].
  [ "$kind" != ts-bundler ] || extra=("msw@$(node -p "require('$root/node_modules/msw/package.json').version")")
  project "$kind" "$types_node" "${extra[@]}"
  cp "$here/program.ts" .
  "${tsc[@]}" -p . || fail "$kind: tsc found errors (above)"
  CONSUMER_KIND="$kind" CONSUMER_RUNTIME=node limited "$kind" node out/program.js
}

# The runtimes come from the npm registry (their postinstall links the platform's binary
# from an optional dependency, also on the registry), installed once into a tools project.
install_runtimes() {
  [ ! -d "$work/runtimes/node_modules/bun" ] || return 0
  mkdir -p "$work/runtimes"
  echo '{ "private": true }' > "$work/runtimes/package.json"
  (cd "$work/runtimes" && npm install --silent --no-audit --no-fund --prefer-offline bun@1 deno@2)
}

# The runtime's own binary (deno's npm bin is a Node wrapper, which would sit between the
# script and the signals it sends).
runtime_bin() {
  case "$1" in
    bun) "$work/runtimes/node_modules/.bin/bun" -e 'console.log(process.execPath)' ;;
    deno) "$work/runtimes/node_modules/.bin/deno" eval 'console.log(Deno.execPath())' ;;
  esac
}

# Bun or Deno: the TS program, both CLIs, the quick start against the packed teamgames-mock.
# `run` is how the runtime runs a file with arguments.
runtime() {
  local name="$1" bin run
  install_runtimes
  bin="$(runtime_bin "$name")"
  case "$name" in
    bun) run=("$bin") ;;
    deno) run=("$bin" run -A) ;;
  esac
  echo "consumers: $name $("$bin" --version | head -n 1)"
  # Deno's type check of `node:` imports reads @types/node from node_modules. Deno's project
  # has msw installed: importing the mock must not load it (its module-level
  # BroadcastChannel kept Deno alive for ever), only reading mock.handlers may.
  local extra=()
  [ "$name" != deno ] || extra=("msw@$(node -p "require('$root/node_modules/msw/package.json').version")")
  project "$name" "$types_node" "${extra[@]}"
  cp "$here/program.ts" "$here/quickstart.ts" "$here/import-mock.mjs" .

  if [ "$name" = deno ]; then
    # Deno type-checks with its own TypeScript: the types of both entries must resolve.
    "$bin" check program.ts quickstart.ts || fail "deno: deno check found errors (above)"
    # msw's module-level BroadcastChannel kept Deno alive forever: the import must exit.
    seconds=30 limited "deno: import 'teamgames-sdk/mock'" "${run[@]}" import-mock.mjs
    # Without --allow-env the key is set but unreadable: the constructor must say so and
    # name --allow-env, not ask to set the variable.
    local denied status=0
    printf '%s\n' "import { StorefrontClient } from 'teamgames-sdk';" 'new StorefrontClient();' > no-env.ts
    denied="$(TEAMGAMES_API_KEY="$api_key" timeout 30 "$bin" run --allow-net --allow-read no-env.ts 2>&1 < /dev/null)" || status=$?
    [ "$status" -ne 0 ] || fail "deno: new StorefrontClient() without --allow-env exited 0: $denied"
    grep -q 'runtime denies reading the TEAMGAMES_API_KEY environment variable.*--allow-env' <<< "$denied" ||
      fail "deno: without --allow-env the constructor did not name --allow-env: $denied"
    ! grep -q "$api_key" <<< "$denied" || fail "deno: without --allow-env the error shows the key: $denied"
    echo "consumers: deno without --allow-env: the constructor names --allow-env"
  fi

  CONSUMER_KIND="$name" CONSUMER_RUNTIME="$name" limited "$name: program.ts" "${run[@]}" program.ts

  # Both CLIs, from the package's bins, run by the runtime.
  local cli help
  for cli in teamgames-mock teamgames; do
    help="$("${run[@]}" "node_modules/.bin/$cli" --help)" || fail "$name: $cli --help: exit code $?"
    grep -q "^Usage: $cli " <<< "$help" || fail "$name: $cli --help printed no usage: $help"
  done
  "${run[@]}" node_modules/.bin/teamgames-mock --port 0 > mock.log 2>&1 &
  mock_pid=$!
  local url="" deadline=$((SECONDS + 30))
  while [ -z "$url" ] && [ "$SECONDS" -lt "$deadline" ] && kill -0 "$mock_pid" 2> /dev/null; do
    sleep 0.1
    url="$(grep -o 'http://127.0.0.1:[0-9]*' mock.log | head -n 1 || true)"
  done
  [ -n "$url" ] || { cat mock.log >&2; fail "$name: teamgames-mock --port 0 printed no URL"; }
  TEAMGAMES_API_KEY="$api_key" TEAMGAMES_BASE_URL="$url" limited "$name: the quick start" "${run[@]}" quickstart.ts
  local catalog
  catalog="$(TEAMGAMES_API_KEY="$api_key" TEAMGAMES_BASE_URL="$url" timeout "$limit" "${run[@]}" node_modules/.bin/teamgames catalog)" ||
    fail "$name: teamgames catalog"
  grep -q 'Abyssal whip' <<< "$catalog" || fail "$name: teamgames catalog printed no Abyssal whip: $catalog"
  kill -INT "$mock_pid"
  local status=0
  wait "$mock_pid" || status=$?
  mock_pid=""
  [ "$status" -eq 0 ] || { cat mock.log >&2; fail "$name: teamgames-mock exited $status on SIGINT"; }
  echo "consumers: $name: teamgames-mock and teamgames (--help, catalog) against the mock at $url"
}

start_all="$(now)"
tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
for kind in "${kinds[@]}"; do
  start="$(now)"
  case "$kind" in
    ts-node16 | ts-bundler | ts-commonjs) typescript "$kind" ;;
    cjs)
      project cjs
      limited cjs node program.cjs
      ;;
    esm)
      project esm
      limited esm node program.mjs
      ;;
    bun | deno) runtime "$kind" ;;
    *) fail "unknown kind '$kind' (ts-node16, ts-bundler, ts-commonjs, cjs, esm, bun, deno)" ;;
  esac
  echo "consumers: $kind passed in $(took "$start") s"
done
echo "consumers: ${#kinds[@]} of ${#kinds[@]} kinds passed (${kinds[*]}) in $(took "$start_all") s"
