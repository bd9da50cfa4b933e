#!/usr/bin/env bash
# A plain-HTTP session against the TeamGames sandbox (the mock), for plugin authors who
# do not write JavaScript (Java, C#, Lua …): every request your plugin sends, with curl.
# It shows the two credential schemes, the checkout's string-typed cartItems, paying,
# the v4 preview and claim, the 10 s limit (skipped with the mock's clock), the v3
# claim with a form body, and a vote reward.
#
# Run it:
#   npm run mock -- --port 4010        # in another terminal
#   TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a bash examples/sandbox-session.sh
#
# It changes the sandbox's state (it starts with POST /__mock/reset), so it refuses to run
# against anything but the mock.
set -euo pipefail
: "${TEAMGAMES_API_KEY:?set TEAMGAMES_API_KEY to a sandbox key, e.g. demo-key-3f9c2a}"
: "${TEAMGAMES_BASE_URL:?set TEAMGAMES_BASE_URL to the mock, e.g. http://127.0.0.1:4010}"
BASE="$TEAMGAMES_BASE_URL"
KEY="$TEAMGAMES_API_KEY"
PLAYER="Player123"

if ! curl -fsS "$BASE/__mock/state" > /dev/null 2>&1; then
  echo "sandbox-session: $BASE is not the TeamGames mock (no /__mock/state); refusing to run" >&2
  exit 1
fi
step() { printf '\n== %s\n' "$*"; }

# v2 and v4 want the Base64 of the raw key in Authorization. -w0: no line wrapping
# (a wrapped value is refused like a wrong key). printf, not echo: no trailing newline.
AUTH="$(printf '%s' "$KEY" | base64 -w0)"

step "reset the sandbox to its seed"
curl -fsS -X POST "$BASE/__mock/reset"; echo

step "catalog of category 3 (v2, Authorization: <BASE64_API_KEY>)"
curl -fsS -X POST "$BASE/api/v2/client/global/products" \
  -H "Authorization: $AUTH" -H 'Content-Type: application/json' \
  -d '{"categoryId": 3}' | head -c 400; echo ' …'

step "checkout 2 Shark packs: cartItems is a STRING holding the JSON array"
CHECKOUT="$(curl -fsS -X POST "$BASE/api/v2/client/global/checkout/complete" \
  -H "Authorization: $AUTH" -H 'Content-Type: application/json' \
  -d "{\"username\": \"$PLAYER\", \"cartItems\": \"[{\\\"id\\\":302,\\\"quantity\\\":2}]\"}")"
echo "$CHECKOUT"
REDIRECT="$(printf '%s' "$CHECKOUT" | sed -n 's/.*"redirect":"\([^"]*\)".*/\1/p')"

step "the player pays: a GET of the redirect (the mock's pay page)"
curl -fsS "$REDIRECT" | sed -e 's/<[^>]*>/ /g' -e 's/  */ /g'; echo

step "preview the claim (v4): lists, changes nothing"
curl -fsS -X POST "$BASE/api/v4/store/transaction/update" \
  -H "Authorization: $AUTH" -H 'Content-Type: application/json' \
  -d "{\"playerName\": \"$PLAYER\", \"preview\": true, \"includeRawTransactions\": false}"; echo

step "claim at once: the service allows one claim per player per 10 s"
curl -fsS -X POST "$BASE/api/v4/store/transaction/update" \
  -H "Authorization: $AUTH" -H 'Content-Type: application/json' \
  -d "{\"playerName\": \"$PLAYER\", \"preview\": false, \"includeRawTransactions\": false}"; echo

step "move the mock's clock 10 s on instead of sleeping, then claim"
curl -fsS -X POST "$BASE/__mock/clock/advance" -H 'Content-Type: application/json' -d '{"ms": 10000}'; echo
curl -fsS -X POST "$BASE/api/v4/store/transaction/update" \
  -H "Authorization: $AUTH" -H 'Content-Type: application/json' \
  -d "{\"playerName\": \"$PLAYER\", \"preview\": false, \"includeRawTransactions\": false}"; echo

step "a legacy v3 claim (raw key in X-API-Key, form body): nothing left, as a message row"
curl -fsS -X POST "$BASE/__mock/clock/advance" -H 'Content-Type: application/json' -d '{"ms": 10000}' > /dev/null
curl -fsS -X POST "$BASE/v3/store/transaction/claim" \
  -H "X-API-Key: $KEY" --data-urlencode "playerName=$PLAYER"; echo

step "an admin grant (a paid, undelivered purchase) and a v3 claim that delivers it"
curl -fsS -X POST "$BASE/__mock/purchases" -H 'Content-Type: application/json' \
  -d "{\"apiKey\": \"$KEY\", \"playerName\": \"$PLAYER\", \"id\": 101, \"quantity\": 1}" > /dev/null
curl -fsS -X POST "$BASE/__mock/clock/advance" -H 'Content-Type: application/json' -d '{"ms": 10000}' > /dev/null
curl -fsS -X POST "$BASE/api/v3/store/transaction/update" \
  -H "X-API-Key: $KEY" -H 'Content-Type: application/json' -d "{\"playerName\": \"$PLAYER\"}"; echo

step "record 3 vote points, then spend them all on reward 1 (form body)"
curl -fsS -X POST "$BASE/__mock/votes" -H 'Content-Type: application/json' \
  -d "{\"apiKey\": \"$KEY\", \"playerName\": \"$PLAYER\", \"points\": 3}"; echo
curl -fsS -X POST "$BASE/v3/vote/reward/claim" \
  -H "X-API-Key: $KEY" -H 'Content-Type: application/x-www-form-urlencoded; charset=UTF-8' \
  --data-urlencode "player=$PLAYER" --data-urlencode 'reward=1' --data-urlencode 'amount=all'; echo

step "what the sandbox holds now: the purchase rows of $PLAYER"
curl -fsS -G "$BASE/__mock/purchases" --data-urlencode "apiKey=$KEY" --data-urlencode "playerName=$PLAYER" | head -c 600; echo ' …'
