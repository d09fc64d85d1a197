// /v1/admin routes of access: API keys, IAM principal mappings, the audit trail, namespace settings.
import {
  AuditQuery,
  CreateApiKeyBody,
  CreatePrincipalMappingBody,
  KeyIdParam,
  NamespaceParam,
  NamespaceSettingsBody,
  PrincipalArnParam,
  RotateApiKeyBody,
} from '../../schemas/api';
import type { ApiKeyService } from '../core/auth';
import type { IamPrincipalService } from '../core/iam-principals';
import type { NamespaceSettingsService } from '../core/namespaces';
import type { ApiKeyRecord, AuditLog } from '../ports';
import { jsonBody, parseWith } from '../http/request';
import { json } from '../http/response';
import type { AdminOperations } from './admin-operations';

export interface AccessRoutesDeps {
  apiKeys: ApiKeyService;
  principals: IamPrincipalService;
  /** Namespace settings as an admin changes them: setting a storage quota counts what the namespace stores first. */
  namespaces: NamespaceSettingsService;
  audit: AuditLog;
  /** How long a request may still carry the settings its key was authorized with (the authorizer's cache). */
  settingsTtlSeconds: number;
}

/** Never return a secret's hash. */
const publicView = ({ secretHash: _hash, previousSecretHash: _previous, ...info }: ApiKeyRecord) => info;

export function accessRoutes({
  apiKeys,
  principals,
  namespaces,
  audit,
  settingsTtlSeconds,
}: AccessRoutesDeps): AdminOperations<
  | 'createApiKey'
  | 'listAuditEntries'
  | 'listApiKeys'
  | 'rotateApiKey'
  | 'revokeApiKey'
  | 'listPrincipalMappings'
  | 'createPrincipalMapping'
  | 'deletePrincipalMapping'
  | 'getNamespaceSettings'
  | 'putNamespaceSettings'
> {
  return {
    createApiKey: async (event) => {
      const input = parseWith(CreateApiKeyBody, jsonBody(event), 'body');
      const { apiKey, record } = await apiKeys.create(input);
      return json(201, { ...publicView(record), apiKey });
    },
    listAuditEntries: async (event) => json(200, await audit.list(parseWith(AuditQuery, event.queryStringParameters, 'query'))),
    listApiKeys: async () => json(200, { keys: (await apiKeys.list()).map(publicView) }),
    rotateApiKey: async (event) => {
      const { keyId } = parseWith(KeyIdParam, event.pathParameters, 'path');
      const { apiKey, record } = await apiKeys.rotate(keyId, parseWith(RotateApiKeyBody, jsonBody(event), 'body'));
      return json(200, { ...publicView(record), apiKey });
    },
    revokeApiKey: async (event) => {
      const { keyId: revoked } = parseWith(KeyIdParam, event.pathParameters, 'path');
      const { keyId, revokedAt } = await apiKeys.revoke(revoked);
      return json(200, { keyId, revokedAt });
    },
    listPrincipalMappings: async () => json(200, { principals: await principals.list() }),
    createPrincipalMapping: async (event) =>
      json(201, await principals.create(parseWith(CreatePrincipalMappingBody, jsonBody(event), 'body'))),
    deletePrincipalMapping: async (event) => {
      const { principalArn } = parseWith(PrincipalArnParam, event.pathParameters, 'path');
      return json(200, await principals.delete(principalArn));
    },
    getNamespaceSettings: async (event) => {
      const { namespace } = parseWith(NamespaceParam, event.pathParameters, 'path');
      return json(200, await namespaces.describe(namespace));
    },
    putNamespaceSettings: async (event) => {
      const { namespace } = parseWith(NamespaceParam, event.pathParameters, 'path');
      const patch = parseWith(NamespaceSettingsBody, jsonBody(event), 'body');
      // Requests carry the settings their key was authorized with, for as long as the authorizer cache keeps it.
      return json(200, { ...(await namespaces.update(namespace, patch)), takesEffectWithinSeconds: settingsTtlSeconds });
    },
  };
}
