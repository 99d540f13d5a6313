#!/usr/bin/env bash
# Rebuild three.min.js: the parts of three.js listed in three_entry.js, minified into one
# classic script that defines the global THREE (a file:// page cannot import ES modules).
# Needs node and npm; run from anywhere. The licence header of three.js is kept in the bundle.
set -euo pipefail
THREE_VERSION=0.187.0
ESBUILD_VERSION=0.25.0
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund "three@$THREE_VERSION" "esbuild@$ESBUILD_VERSION"
cp "$here/three_entry.js" entry.js
npx esbuild entry.js --bundle --minify --format=iife --global-name=THREE --legal-comments=inline \
  --target=es2020 --banner:js="/* three.js r${THREE_VERSION:2:3} (npm three@$THREE_VERSION), MIT licence (LICENSE.three); rebuilt by build_three.sh */" \
  --outfile="$here/three.min.js"
cp node_modules/three/LICENSE "$here/LICENSE.three"
echo "three.js $THREE_VERSION bundled into $here/three.min.js"
