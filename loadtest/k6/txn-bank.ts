// The bank: transfers between accounts in transactions (POST /v1/txn: read both balances, then write both
// with `ifVersion`), beside audits that read every account in one read-only transaction. Transactions are
// serializable, so every committed audit must see the same total: a check, and a threshold on
// `audit_mismatches` that fails the run on the first audit that does not. `npm run loadtest -- txn-bank`.
import { check } from 'k6';
import encoding from 'k6/encoding';
import { Counter } from 'k6/metrics';
import type { Options } from 'k6/options';
import { bodyText, checkStatus } from './lib/http.ts';
import { numberEnv } from './lib/env.ts';
import { runPrefix } from './lib/keys.ts';
import { committed, txn, type TxnRead } from './lib/kv.ts';
import { baseOptions, load, scenario } from './lib/load.ts';
import { thresholds } from './lib/thresholds.ts';

const ACCOUNTS = Math.ceil(numberEnv('RS_ACCOUNTS', 8));
const OPENING_BALANCE = 1000;
const TRANSFER_MAX = 50;

const auditMismatches = new Counter('audit_mismatches');
const auditsCommitted = new Counter('audits_committed');
const transfersCommitted = new Counter('transfers_committed');
const transfersAborted = new Counter('transfers_aborted');

const shape = load({ rate: 10, durationSeconds: 60, vus: 6 });

export const options: Options = {
  ...baseOptions(),
  scenarios: {
    transfers: scenario(shape, { exec: 'transfer' }),
    // One audit for every five transfers.
    audits: scenario(shape, { exec: 'audit', share: 0.2 }),
  },
  thresholds: thresholds(
    // 409 (conflict) and 412 (a balance changed since it was read) are outcomes, not errors; they count in
    // transfers_aborted. Checks fail only on other statuses and on a wrong total.
    { p95Ms: 1500, p99Ms: 3000 },
    { audit_mismatches: ['count==0'], audits_committed: ['count>0'], transfers_committed: ['count>0'] },
  ),
};

interface Bank {
  accounts: string[];
  total: number;
}

export function setup(): Bank {
  const prefix = runPrefix('bank');
  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `${prefix}account${i}`);
  const opened = txn(accounts.map((key) => ({ op: 'put', key, value: String(OPENING_BALANCE), ifVersion: 0, contentType: 'text/plain' })));
  if (opened.status !== 200) throw new Error(`opening the accounts answered ${opened.status}: ${bodyText(opened)}`);
  return { accounts, total: ACCOUNTS * OPENING_BALANCE };
}

const balanceOf = (read: TxnRead): number => Number(encoding.b64decode(read.value ?? '', 'std', 's'));

export function transfer(bank: Bank): void {
  const from = Math.floor(Math.random() * bank.accounts.length);
  const to = (from + 1 + Math.floor(Math.random() * (bank.accounts.length - 1))) % bank.accounts.length;
  const [fromKey, toKey] = [bank.accounts[from]!, bank.accounts[to]!];
  transfersCommitted.add(0);
  transfersAborted.add(0);
  const read = txn(
    [
      { op: 'get', key: fromKey },
      { op: 'get', key: toKey },
    ],
    { tags: { op: 'transfer-read' } },
  );
  checkStatus(read, 'transfer read', 200, 409);
  const result = committed(read);
  const [a, b] = result?.reads ?? [];
  if (!a?.found || !b?.found || a.version === undefined || b.version === undefined) {
    transfersAborted.add(1);
    return;
  }
  const [fromBalance, toBalance] = [balanceOf(a), balanceOf(b)];
  const amount = Math.min(fromBalance, 1 + Math.floor(Math.random() * TRANSFER_MAX));
  if (amount <= 0) return;
  const moved = txn(
    [
      { op: 'put', key: fromKey, value: String(fromBalance - amount), ifVersion: a.version, contentType: 'text/plain' },
      { op: 'put', key: toKey, value: String(toBalance + amount), ifVersion: b.version, contentType: 'text/plain' },
    ],
    { tags: { op: 'transfer-write' } },
  );
  checkStatus(moved, 'transfer write', 200, 409, 412);
  if (moved.status === 200) transfersCommitted.add(1);
  else transfersAborted.add(1);
}

export function audit(bank: Bank): void {
  auditMismatches.add(0);
  const response = txn(
    bank.accounts.map((key) => ({ op: 'get', key })),
    { tags: { op: 'audit' } },
  );
  checkStatus(response, 'audit', 200, 409);
  const result = committed(response);
  if (!result) return;
  auditsCommitted.add(1);
  const balances = result.reads.map((read) => (read.found ? balanceOf(read) : Number.NaN));
  const total = balances.reduce((sum, balance) => sum + balance, 0);
  const constant = check(total, { 'audit total constant': (t) => t === bank.total });
  check(balances, { 'audit: no balance negative': (list) => list.every((balance) => balance >= 0) });
  if (!constant) {
    auditMismatches.add(1);
    console.error(`audit ${result.txid}: total ${total}, expected ${bank.total} (balances ${balances.join(', ')})`);
  }
}
