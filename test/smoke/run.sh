#!/usr/bin/env bash
# After `npm run build`: pack the package as npm would publish it, install the tarball
# into an empty project, and load both entry points with import and require.
# The main entry must work without msw installed; ./mock needs the optional peer msw.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
cd "$work"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund --prefer-offline "./$tarball"

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

msw_version="$(node -p "require('$root/node_modules/msw/package.json').version")"
npm install --silent --no-audit --no-fund --prefer-offline "msw@$msw_version"
node --input-type=module -e "
  const { createMockService } = await import('teamgames-sdk/mock');
  if (typeof createMockService !== 'function') throw new Error('ESM: createMockService missing');
  console.log('smoke: import teamgames-sdk/mock ok');
"
node -e "
  const { createMockService } = require('teamgames-sdk/mock');
  if (typeof createMockService !== 'function') throw new Error('CJS: createMockService missing');
  console.log('smoke: require teamgames-sdk/mock ok');
"
