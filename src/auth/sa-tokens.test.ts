/**
 * A service account token's user: what the reference makes of it, and one frozen object per
 * token, shared by its requests as the static tokens' users are (priority and fairness keeps
 * its classification per user object).
 */
import { afterAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ServiceAccountTokens } from './sa-tokens';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-tokens-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test("a token's user is made once and frozen; a token whose account changed has none", async () => {
  const tokens = await ServiceAccountTokens.open(dir, { issuer: 'https://svc.example' });
  const { token } = await tokens.issue({
    namespace: 'ns1',
    name: 'robot',
    uid: 'u1',
    audiences: ['https://svc.example'],
    expirationSeconds: 3600,
  });
  let accountUid = 'u1';
  const lookup = () => accountUid;
  const a = await tokens.authenticate(token, lookup);
  const b = await tokens.authenticate(token, lookup);
  expect(a).toEqual({
    name: 'system:serviceaccount:ns1:robot',
    uid: 'u1',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
  });
  expect(b).toBe(a as NonNullable<typeof a>);
  expect(Object.isFrozen(a)).toBe(true);
  // The account was recreated (a new uid): the kept user is not handed out.
  accountUid = 'u2';
  expect(await tokens.authenticate(token, lookup)).toBeUndefined();
});
