// Reading an API Gateway proxy event: validated params (zod), the body's bytes, the caller's principal.
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { z } from 'zod';
import { ConditionalHeaders } from '../../schemas/api';
import { limits } from '../../schemas/topology';
import type { Principal, RequestPrincipal } from '../core/auth';
import type { ResolvedNamespaceSettings } from '../core/namespaces';
import type { Conditions } from '../core/conditions';
import type { ErrorCode } from '../../schemas/errors';
import { RingstoreError } from '../core/errors';
import { parseEntityTags, versionsMatched } from './entity-tags';
import { jsonSyntaxError } from './json-syntax';

/** Fields whose failures have a code of their own; everything else is `request.invalid`. */
const fieldCodes: Record<string, ErrorCode> = {
  key: 'kv.keyInvalid',
  ttlSeconds: 'kv.ttlInvalid',
  cursor: 'kv.cursorInvalid',
};

/**
 * Parses `input` with `schema`, turning the first problem into a 400 that names the field. An unknown field
 * is named before anything else (it is usually why a required one is missing: `operations` for `ops`), with
 * the known field it most likely meant.
 */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const issue = issues.find((candidate) => candidate.code === 'unrecognized_keys') ?? issues[0]!;
  const path = issue.path.map(String).join('.');
  const at = path === '' ? where : `${where} ${path}`;
  if (issue.code === 'unrecognized_keys') {
    const unknown = issue.keys[0]!;
    const field = path === '' ? unknown : `${path}.${unknown}`;
    const suggestion = closestName(unknown, fieldsAt(schema, issue.path));
    throw new RingstoreError('request.invalid', `${at}: unknown field ${unknown}${suggestion ? `; did you mean ${suggestion}?` : ''}`, {
      details: { field, in: where, ...(suggestion ? { suggestion } : {}) },
    });
  }
  const field = path || where;
  throw new RingstoreError(fieldCodes[field] ?? 'request.invalid', `${at}: ${issue.message}`, { details: { field, in: where } });
}

/** zod 4's description of a schema, as far as finding an object's fields needs it. */
interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  element?: { _zod: { def: SchemaDef } };
  innerType?: { _zod: { def: SchemaDef } };
  in?: { _zod: { def: SchemaDef } };
  options?: Array<{ _zod: { def: SchemaDef } }>;
}

/** The field names the object at `path` of `schema` knows (every option's, under a union). */
function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const fields = new Set<string>();
  const visit = (def: SchemaDef, rest: readonly PropertyKey[]): void => {
    if (def.innerType) visit(def.innerType._zod.def, rest);
    else if (def.in) visit(def.in._zod.def, rest);
    else if (def.options) for (const option of def.options) visit(option._zod.def, rest);
    else if (def.type === 'array' && def.element && typeof rest[0] === 'number') visit(def.element._zod.def, rest.slice(1));
    else if (def.type === 'object' && def.shape && rest.length === 0) for (const name of Object.keys(def.shape)) fields.add(name);
    else if (def.type === 'object' && def.shape) {
      const next = def.shape[String(rest[0])];
      if (next) visit(next._zod.def, rest.slice(1));
    }
  };
  visit((schema as unknown as { _zod: { def: SchemaDef } })._zod.def, path);
  return [...fields];
}

/** A name this far (in edits) from a known one is taken for a misspelling of it. */
const suggestionDistanceMax = 3;

/** Levenshtein distance, case-insensitive; names are short (query parameters), so the table is small. */
function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= y.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length]!;
}

/** The known name `name` most likely meant: one it starts or is started by (`ttl`, `ttlSecond`), else the nearest few edits away. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const byPrefix = known.find(
    (candidate) => lower.length > 0 && (candidate.toLowerCase().startsWith(lower) || lower.startsWith(candidate.toLowerCase())),
  );
  if (byPrefix) return byPrefix;
  // An abbreviation either way round: `ops` for `operations`, its letters in order from the same first letter.
  const abbreviates = (short: string, long: string) => {
    let next = 0;
    for (const letter of long) if (letter === short[next]) next += 1;
    return short.length >= 2 && short[0] === long[0] && next === short.length;
  };
  const byAbbreviation = known.find((candidate) => {
    const other = candidate.toLowerCase();
    return other.length < lower.length ? abbreviates(other, lower) : abbreviates(lower, other);
  });
  if (byAbbreviation) return byAbbreviation;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance <= suggestionDistanceMax && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** Throws a 400 naming the first query parameter that `known` does not list, with the name it most likely meant. */
export function refuseUnknownQuery(
  query: Record<string, string | undefined> | null | undefined,
  known: readonly string[],
  route: string,
): void {
  const unknown = Object.keys(query ?? {}).find((name) => !known.includes(name));
  if (unknown === undefined) return;
  const suggestion = closestName(unknown, known);
  const accepted = known.length === 0 ? `${route} takes no query parameters` : `${route} accepts ${known.join(', ')}`;
  throw new RingstoreError(
    'request.invalid',
    `query ${unknown}: unknown parameter${suggestion ? `; did you mean ${suggestion}?` : ''} (${accepted})`,
    { details: { field: unknown, in: 'query', known: [...known], ...(suggestion ? { suggestion } : {}) } },
  );
}

/** Header lookup that ignores case, as HTTP does. */
export function headersOf(event: APIGatewayProxyEvent): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = value;
  return headers;
}

export function pathParam(event: APIGatewayProxyEvent, name: string): string {
  const value = event.pathParameters?.[name];
  if (value === undefined) throw new RingstoreError('request.invalid', `missing path parameter ${name}`, { details: { field: name } });
  return value;
}

export function bodyBytes(event: APIGatewayProxyEvent): Uint8Array {
  if (!event.body) return new Uint8Array(0);
  return Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
}

export function jsonBody(event: APIGatewayProxyEvent): unknown {
  const text = Buffer.from(bodyBytes(event)).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    const problem = jsonSyntaxError(text);
    const where = problem ? `: expected ${problem.expected} at line ${problem.line}, column ${problem.column}` : '';
    throw new RingstoreError('request.invalid', `body is not valid JSON${where}`, {
      details: { in: 'body', ...(problem ? { position: problem.position, line: problem.line, column: problem.column } : {}) },
    });
  }
}

/** If-Match and If-None-Match as the versions their entity tags can match (RFC 9110 §13.1.1–2). */
export function conditionsOf(event: APIGatewayProxyEvent): Conditions {
  const headers = parseWith(ConditionalHeaders, listHeadersOf(event, ['if-match', 'if-none-match']), 'header');
  const ifMatch = headers['if-match'];
  const ifNoneMatch = headers['if-none-match'];
  return {
    ...(ifMatch === undefined ? {} : { ifMatch: versionsMatched(entityTagsOf(ifMatch, 'if-match'), 'strong') }),
    ...(ifNoneMatch === undefined ? {} : { ifNoneMatch: versionsMatched(entityTagsOf(ifNoneMatch, 'if-none-match'), 'weak') }),
  };
}

function entityTagsOf(value: string, field: 'if-match' | 'if-none-match') {
  const parsed = parseEntityTags(value, limits.entityTagsMax);
  if (parsed.ok) return parsed.condition;
  throw new RingstoreError('request.invalid', `header ${field}: ${parsed.problem}`, { details: { field, in: 'header' } });
}

/**
 * Headers as `headersOf`, except that a list header sent on several lines is one list, as HTTP
 * combines them (RFC 9110 §5.3); API Gateway's `headers` keeps only the last line.
 */
function listHeadersOf(event: APIGatewayProxyEvent, names: readonly string[]): Record<string, string> {
  const headers = headersOf(event);
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    const lower = name.toLowerCase();
    if (names.includes(lower) && values && values.length > 1) headers[lower] = values.join(', ');
  }
  return headers;
}

const consistencyOf = (value: unknown) => (value === 'strong' ? 'strong' : 'eventual');

/** The authorizer context's names of a namespace's quotas (its values are strings and numbers only). */
export const quotaContext = {
  requestsPerSecond: 'rateRequestsPerSecond',
  burst: 'rateBurst',
  keysMax: 'storageKeysMax',
  bytesMax: 'storageBytesMax',
} as const;

/**
 * What the authorizer hands the handlers for a principal: itself and its namespace's defaults and quotas,
 * flat (an authorizer context holds only strings and numbers). The IAM path builds the same context
 * (lambdas/http/iam-callers.ts), so every handler reads both through `principalOf`.
 */
export function authorizerContextOf(principal: Principal, settings: ResolvedNamespaceSettings): Record<string, string | number> {
  const { readConsistency, writeConsistency, drMode, rate, storage } = settings;
  return {
    keyId: principal.keyId,
    namespace: principal.namespace,
    role: principal.role,
    readConsistency,
    writeConsistency,
    drMode,
    [quotaContext.requestsPerSecond]: rate.requestsPerSecond,
    [quotaContext.burst]: rate.burst,
    ...(storage?.keysMax === undefined ? {} : { [quotaContext.keysMax]: storage.keysMax }),
    ...(storage?.bytesMax === undefined ? {} : { [quotaContext.bytesMax]: storage.bytesMax }),
  };
}

/** A positive number from the authorizer context (API Gateway may hand numbers over as strings). */
function positiveOf(value: unknown): number | undefined {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number > 0 ? number : undefined;
}

function quotasOf(context: Partial<Record<string, unknown>> | null | undefined): Pick<RequestPrincipal, 'rate' | 'storage'> {
  const requestsPerSecond = positiveOf(context?.[quotaContext.requestsPerSecond]);
  const burst = positiveOf(context?.[quotaContext.burst]);
  // A bound of 0 is a bound (nothing may be stored), so the storage bounds are read as any number from 0.
  const keysMax = Number(context?.[quotaContext.keysMax] ?? Number.NaN);
  const bytesMax = Number(context?.[quotaContext.bytesMax] ?? Number.NaN);
  const storage = {
    ...(Number.isInteger(keysMax) && keysMax >= 0 ? { keysMax } : {}),
    ...(Number.isInteger(bytesMax) && bytesMax >= 0 ? { bytesMax } : {}),
  };
  return {
    ...(requestsPerSecond !== undefined && burst !== undefined ? { rate: { requestsPerSecond, burst } } : {}),
    ...(Object.keys(storage).length > 0 ? { storage } : {}),
  };
}

/** The caller and its namespace's defaults, as the authorizer put them into the request context. */
export function principalOf(event: APIGatewayProxyEvent): RequestPrincipal {
  // The authorizer's context is whatever it returned (typed `any` by @types/aws-lambda): read it as unknown.
  const context: Partial<Record<string, unknown>> | null | undefined = event.requestContext?.authorizer;
  const namespace = context?.namespace;
  const role = context?.role;
  const keyId = context?.keyId;
  if (typeof namespace !== 'string' || (role !== 'user' && role !== 'admin') || typeof keyId !== 'string') {
    throw new RingstoreError('auth.missingKey', 'request was not authenticated');
  }
  return {
    namespace,
    role,
    keyId,
    readConsistency: consistencyOf(context?.readConsistency),
    writeConsistency: consistencyOf(context?.writeConsistency),
    // Anything but an explicit `async` is key-sync: a context without it (an older authorizer's cached answer) errs safe.
    drMode: context?.drMode === 'async' ? 'async' : 'key-sync',
    ...quotasOf(context),
  };
}
