// HTTP targets that answer at once, without DynamoDB: the local gateway in front of stub handlers,
// and a bare node:http server. They price the HTTP hop itself (client, Node's HTTP, the gateway's own
// code) apart from everything behind it.
import { type Agent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { startGateway } from '../cdk/local/gateway';
import { handlers } from '../schemas/topology';
import { type BenchCase, nodeHttpRequest } from './cases';
import type { Operation } from './measure';
import type { Workload } from './workload';

export interface EchoTargets {
  gatewayUrl: string;
  bareUrl: string;
  stop(): Promise<void>;
}

const ack = JSON.stringify({ key: 'bench', version: 1 });

/** Both targets answer a GET with a stored-size value and a PUT with a write acknowledgement. */
export async function startEchoTargets(workload: Workload, stage: string): Promise<EchoTargets> {
  const value = workload.valueOf(0);
  const valueBase64 = value.toString('base64');
  const proxy = async (event: { httpMethod: string }): Promise<APIGatewayProxyResult> =>
    event.httpMethod === 'GET'
      ? { statusCode: 200, headers: { 'content-type': 'application/octet-stream', etag: '"1"' }, body: valueBase64, isBase64Encoded: true }
      : { statusCode: 200, headers: { 'content-type': 'application/json', etag: '"1"' }, body: ack };
  const gateway = await startGateway({
    port: 0,
    stage,
    authorizerCacheTtlSeconds: 60,
    handlers: {
      authorizer: async () => ({
        principalId: 'bench',
        policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }] },
        context: { namespace: 'bench', role: 'user', keyId: 'bench' },
      }),
      // Every route answers with the stub, whatever handlers topology lists.
      proxies: Object.fromEntries(
        Object.keys(handlers)
          .filter((name) => name !== 'authorizer')
          .map((name) => [name, proxy]),
      ),
    },
  });
  const bare: Server = createServer((request, response) => {
    request.on('data', () => undefined);
    request.on('end', () => {
      const body = request.method === 'GET' ? value : Buffer.from(ack);
      response.writeHead(200, { 'content-length': String(body.length) });
      response.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    bare.once('error', reject);
    bare.listen(0, '127.0.0.1', resolve);
  });
  const barePort = (bare.address() as AddressInfo).port;
  return {
    gatewayUrl: gateway.url,
    bareUrl: `http://127.0.0.1:${barePort}`,
    stop: async () => {
      await gateway.stop();
      await new Promise<void>((resolve) => {
        bare.close(() => resolve());
        bare.closeAllConnections();
      });
    },
  };
}

/** node:http keep-alive calls, the transport of the measured HTTP cases (cases.ts, httpCases). */
function echoCasesOf(prefix: string, label: string, baseUrl: string, workload: Workload, agent: Agent): BenchCase[] {
  const keyUrls = workload.keys.map((key) => `${baseUrl}/v1/kv/${encodeURIComponent(key)}`);
  const urlOf = (i: number) => keyUrls[workload.keyIndexOf(i)]!;
  const call =
    (method: 'GET' | 'PUT'): Operation =>
    async (i) => {
      const body = method === 'PUT' ? workload.valueOf(i) : undefined;
      const response = await nodeHttpRequest(agent, urlOf(i), {
        method,
        headers: {
          'x-api-key': 'bench-key',
          ...(body ? { 'content-type': 'application/octet-stream', 'content-length': String(body.length) } : {}),
        },
        ...(body ? { body } : {}),
      });
      if (response.status !== 200) throw new Error(`${label} ${method} answered ${response.status}`);
    };
  return [
    { id: `${prefix}Put`, label: `${label} PUT (no backend)`, layer: 'diagnostic', kind: 'put', run: call('PUT') },
    { id: `${prefix}Get`, label: `${label} GET (no backend)`, layer: 'diagnostic', kind: 'get', run: call('GET') },
  ];
}

/** The local gateway with stub handlers, and the bare server, called as the measured HTTP cases call Ringstore. */
export function echoCases(targets: EchoTargets, workload: Workload, agent: Agent): BenchCase[] {
  return [
    ...echoCasesOf('diag.gatewayEcho', 'gateway echo', targets.gatewayUrl, workload, agent),
    ...echoCasesOf('diag.bareHttp', 'bare node:http', targets.bareUrl, workload, agent),
  ];
}
