// Card signing with the official A2A JS SDK (@a2a-js/sdk 1.3.0), for tests/interop/test_signing.py.
//
//   node card_signing.mjs verify <card.json> <jwks.json>   exit 0 if a signature verifies
//   node card_signing.mjs sign <card.json> <alg>            prints {"card": signed, "jwks": {...}}
//
// Verification uses the SDK's verifyAgentCardSignature with the key the JWKS has for the
// signature's kid (never a jku); signing uses generateAgentCardSignature with a fresh key and a
// protected header {alg, kid, typ: JOSE}.

import { readFileSync } from 'node:fs';
import * as jose from 'jose';
import { generateAgentCardSignature, verifyAgentCardSignature } from '@a2a-js/sdk';

const [cmd, cardPath, arg] = process.argv.slice(2);
const card = JSON.parse(readFileSync(cardPath, 'utf8'));

if (cmd === 'verify') {
  const jwks = JSON.parse(readFileSync(arg, 'utf8'));
  const verify = verifyAgentCardSignature(async (kid) => {
    const jwk = jwks.keys.find((k) => k.kid === kid);
    if (!jwk) throw new Error(`no key ${kid}`);
    return jose.importJWK(jwk, jwk.alg);
  });
  try {
    await verify(card);
    console.log('verified');
  } catch (e) {
    console.log(`not verified: ${e.message}`);
    process.exit(1);
  }
} else if (cmd === 'sign') {
  const alg = arg || 'ES256';
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { crv: alg === 'EdDSA' ? 'Ed25519' : undefined, extractable: true });
  const jwk = await jose.exportJWK(publicKey);
  jwk.kid = await jose.calculateJwkThumbprint(jwk);
  jwk.alg = alg;
  const sign = generateAgentCardSignature(privateKey, { alg, kid: jwk.kid, typ: 'JOSE' });
  console.log(JSON.stringify({ card: await sign(card), jwks: { keys: [jwk] } }));
} else {
  console.error('usage: card_signing.mjs verify <card> <jwks> | sign <card> <alg>');
  process.exit(2);
}
