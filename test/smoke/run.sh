#!/usr/bin/env bash
# After `npm run build`: pack the package as npm would publish it, install the tarball
# into an empty project, and load both entry points with import and require.
# Without msw installed: the main entry, ./mock (mock.fetch, mock.listen) and the
# teamgames-mock CLI work, and mock.handlers says how to install the optional peer msw;
# with msw, mock.handlers are msw's handlers. ./postgres and ./mysql load without pg and
# mysql2 (they take the user's pool). test/consumers/run.sh runs whole programs.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
cd "$work"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund --prefer-offline "./$tarball"

# Source maps ship without sourcesContent (stack traces name src/ files; the sources are
# not shipped a second time inside the maps), and the package ships no images.
maps=(node_modules/teamgames-sdk/dist/*.map node_modules/teamgames-sdk/dist/*/*.map)
[ -f "${maps[0]}" ] || { echo 'smoke: no source maps in dist' >&2; exit 1; }
if grep -l '"sourcesContent"' "${maps[@]}"; then echo 'smoke: the source maps above embed the sources (sourcesContent)' >&2; exit 1; fi
if find node_modules/teamgames-sdk -name '*.png' | grep .; then echo 'smoke: the package ships images (above)' >&2; exit 1; fi
echo "smoke: ${#maps[@]} source maps without sourcesContent, no images"

# ... and with `node --enable-source-maps` a stack trace from the installed package names
# the SDK's src/ files (an error thrown inside the client's option checks).
trace="$(node --enable-source-maps --input-type=module -e "
  const { StorefrontClient } = await import('teamgames-sdk');
  try { new StorefrontClient({ apiKey: '' }); } catch (error) { console.log(error.stack); }
")"
grep -Eq '\(.*/src/[a-z/-]+\.ts:[0-9]+:[0-9]+\)' <<< "$trace" || { echo "smoke: the stack trace does not name src/ files:"$'\n'"$trace" >&2; exit 1; }
echo "smoke: a stack trace under --enable-source-maps names $(grep -Eo 'src/[a-z/-]+\.ts:[0-9]+' <<< "$trace" | head -n 1)"

node --input-type=module -e "
  const sdk = await import('teamgames-sdk');
  if (typeof sdk.StorefrontClient !== 'function') throw new Error('ESM: StorefrontClient missing');
  new sdk.StorefrontClient({ apiKey: 'k' });
  console.log('smoke: import teamgames-sdk ok (without msw)');
"
node -e "
  const sdk = require('teamgames-sdk');
  if (typeof sdk.StorefrontClient !== 'function') throw new Error('CJS: StorefrontClient missing');
  if (!sdk.isStorefrontError(new sdk.InvalidInputError('a', 'b'))) throw new Error('CJS: guard broken');
  console.log('smoke: require teamgames-sdk ok (without msw)');
"

# The parts loaded on first use (v3 readers, the checkout part, event hooks, the delivery engine,
# the file journal) must ship in the tarball and load from it, in both module systems.
cat > lazy-parts.cjs <<'JS'
module.exports = async function lazyParts(sdk, journalPath) {
  const answers = {
    '/api/v3/store/transaction/update': '[]',
    '/v3/vote/reward/claim': '[{"message":"Insufficient points."}]',
    '/api/v2/client/global/checkout/complete': '{"status":"INVALID_STOCK","productsAffected":[]}',
    '/api/v4/store/transaction/update': '{"status":"ERROR","code":"NO_ITEMS","message":"none"}',
  };
  const fetch = async (url) => new Response(answers[new URL(url).pathname]);
  let events = 0;
  const journal = new sdk.FileJournal(journalPath);
  const client = new sdk.StorefrontClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch, onEvent: () => (events += 1), journal });
  const results = [
    (await client.claimLegacy('Ann')).code,
    (await client.claimVoteReward({ player: 'Ann', reward: '1', amount: 'all' })).insufficientPoints,
    (await client.checkout({ username: 'Ann', items: [{ id: 1, quantity: 1 }] })).outcome,
    (await client.deliver('Ann', () => {})).code,
    (await journal.pending()).length,
  ];
  await journal.close();
  if (JSON.stringify(results) !== JSON.stringify(['NO_ITEMS', true, 'INVALID_STOCK', 'NO_ITEMS', 0]) || events !== 8) {
    throw new Error(`parts loaded on first use: ${JSON.stringify({ results, events })}`);
  }
};
JS
node --input-type=module -e "
  const { default: lazyParts } = await import('$work/lazy-parts.cjs');
  await lazyParts(await import('teamgames-sdk'), '$work/esm-journal.jsonl');
  console.log('smoke: import teamgames-sdk: the parts loaded on first use work');
"
node -e "
  require('./lazy-parts.cjs')(require('teamgames-sdk'), '$work/cjs-journal.jsonl')
    .then(() => console.log('smoke: require teamgames-sdk: the parts loaded on first use work'))
    .catch((error) => { console.error(error); process.exit(1); });
"

# The database journals take the user's pool: their entries load without pg or mysql2 installed.
node --input-type=module -e "
  const { PostgresJournal, postgresSchema } = await import('teamgames-sdk/postgres');
  const { MySqlJournal, mysqlSchema } = await import('teamgames-sdk/mysql');
  const pool = { query: async () => ({ rows: [] }), connect: async () => { throw new Error('unused'); }, getConnection: async () => { throw new Error('unused'); } };
  if (!new PostgresJournal(pool).nodeId || !new MySqlJournal(pool).nodeId) throw new Error('ESM: a database journal has no node id');
  if (!postgresSchema().includes('CREATE TABLE IF NOT EXISTS') || !mysqlSchema().includes('CREATE TABLE IF NOT EXISTS')) throw new Error('ESM: DDL missing');
  console.log('smoke: import teamgames-sdk/postgres and /mysql ok (without pg, mysql2)');
"
node -e "
  const { PostgresJournal } = require('teamgames-sdk/postgres');
  const { MySqlJournal, recordDelivery } = require('teamgames-sdk/mysql');
  if (typeof PostgresJournal !== 'function' || typeof MySqlJournal !== 'function' || typeof recordDelivery !== 'function') throw new Error('CJS: database journals missing');
  console.log('smoke: require teamgames-sdk/postgres and /mysql ok (without pg, mysql2)');
"

# The mock without msw: the module loads, mock.handlers names the one command that fixes
# it, and the CLI answers.
node --input-type=module -e "
  const { createMockService, exampleSeed } = await import('teamgames-sdk/mock');
  const mock = createMockService({ seed: exampleSeed });
  let message = '';
  try { mock.handlers; } catch (error) { message = error.message; }
  if (!message.includes('npm i -D msw')) throw new Error('ESM: mock.handlers without msw: ' + (message || 'no error'));
  console.log('smoke: import teamgames-sdk/mock ok (without msw; mock.handlers says: npm i -D msw)');
"
node -e "
  const { createMockService, exampleSeed } = require('teamgames-sdk/mock');
  if (typeof createMockService({ seed: exampleSeed }).fetch !== 'function') throw new Error('CJS: mock.fetch missing');
  console.log('smoke: require teamgames-sdk/mock ok (without msw)');
"
help="$(npx --no-install teamgames-mock --help)"
grep -q '^Usage: teamgames-mock' <<< "$help" || { echo "smoke: teamgames-mock --help without msw: $help" >&2; exit 1; }
echo 'smoke: teamgames-mock --help ok (without msw)'

msw_version="$(node -p "require('$root/node_modules/msw/package.json').version")"
npm install --silent --no-audit --no-fund --prefer-offline "msw@$msw_version"
node --input-type=module -e "
  const { createMockService, exampleSeed } = await import('teamgames-sdk/mock');
  const { handlers } = createMockService({ seed: exampleSeed });
  if (!Array.isArray(handlers) || handlers.length === 0) throw new Error('ESM: mock.handlers empty with msw');
  console.log('smoke: import teamgames-sdk/mock ok, ' + handlers.length + ' msw handlers');
"
node -e "
  const { createMockService, exampleSeed } = require('teamgames-sdk/mock');
  const { handlers } = createMockService({ seed: exampleSeed });
  if (!Array.isArray(handlers) || handlers.length === 0) throw new Error('CJS: mock.handlers empty with msw');
  console.log('smoke: require teamgames-sdk/mock ok, ' + handlers.length + ' msw handlers');
"
