#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Usage: node validate.mjs FILE
// Validates FILE (a JSON document) as an OpenAPI document with
// @seriousme/openapi-schema-validator: the official OpenAPI schema of the
// document's version (3.1: JSON Schema 2020-12) and every $ref resolving.
// Prints "FILE: valid OpenAPI X.Y.Z" and exits 0, or prints each error and
// exits 1; 2 when FILE cannot be read or is not JSON. Runs on Node >= 18.
// tests/daemon/test_openapi.py installs it (npm ci) outside the source tree.
import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';

const file = process.argv[2];
if (process.argv.length !== 3) {
    console.error('usage: node validate.mjs FILE');
    process.exit(2);
}

let doc;
try {
    doc = JSON.parse(await readFile(file, 'utf8'));
} catch (e) {
    console.error(`${file}: cannot read it as JSON: ${e.message}`);
    process.exit(2);
}

const validator = new Validator({ allErrors: true });
const res = await validator.validate(doc);
if (res.valid) {
    console.log(`${file}: valid OpenAPI ${validator.specificationVersion}`);
    process.exit(0);
}

// ajv's errors are objects (where, what, and the schema rule); the $ref
// check and the version check give one string.
const errors = Array.isArray(res.errors) ? res.errors : [res.errors];
const seen = new Set();
const lines = [];
for (const e of errors) {
    let line;
    if (e && typeof e === 'object') {
        const where = e.instancePath || '/';
        const params =
            e.params && Object.keys(e.params).length ? ' ' + JSON.stringify(e.params) : '';
        line = `at ${where}: ${e.message}${params} (schema ${e.schemaPath})`;
    } else {
        line = String(e);
    }
    if (!seen.has(line)) {
        seen.add(line);
        lines.push(line);
    }
}
const version = validator.specificationVersion ? ` OpenAPI ${validator.specificationVersion}` : '';
console.log(`${file}: INVALID${version} document, ${lines.length} error(s):`);
for (const line of lines) {
    console.log(`  ${line}`);
}
process.exit(1);
