/**
 * The failure converter workers and clients use when history is encrypted (loaded by path through
 * `dataConverter.failureConverterPath`, see infra/encryption-codec.ts): a failure's message and stack
 * trace go into its `encodedAttributes` payload, which the payload codec encrypts; history keeps
 * "Encoded failure" in their place. Decoding works whether or not a failure was written this way.
 *
 * Plain CommonJS on purpose: the SDK `require()`s this path at run time (no TypeScript loader there,
 * e.g. under vitest), and a worker that bundles its workflow code includes it in the bundle.
 * Pure (only @temporalio/common).
 */
'use strict';
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
