#!/usr/bin/env node
'use strict';
// `npm start`: the local cloud (main.ts), run from its sources bundled into node_modules/.cache/ringstore-local/ and
// rebuilt when they change (scripts/checkout-bundle.cjs): a start loads one file instead of compiling some two hundred
// and fifty sources with tsx, 1.2 CPU-s to ready against 2.0.
require('../../scripts/checkout-bundle.cjs')
  .loadCheckoutBundle('cdk/local/main.ts', 'ringstore-local')
  .catch((error) => {
    console.error(`error: ${error && error.message ? error.message : String(error)}`);
    process.exit(1);
  });
