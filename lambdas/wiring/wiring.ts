// The composition root's state: configuration, time, ids, the logger, what the host passes in, and the
// instances built so far. Builders (clients.ts, control.ts, data.ts, services.ts) add to it on first use,
// so a handler builds only what it asks for, and only what its HandlerSpec allows it to touch.
import { randomBytes, randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { type HandlerName, type HandlerSpec, handlers } from '../../schemas/topology';
import type { FaultController } from '../adapters/fault-injection';
import { type RuntimeConfig, loadConfig } from '../config';
import { RingstoreError } from '../core/errors';
import { redactSecrets } from '../core/redaction';
import type { Clock, FailoverStarter, IdSource, Orchestrator, PromotionStarter, RebalanceStarter } from '../ports';

export const systemClock: Clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };

/** The real wait the services that poll or wait out a lease are given (tests give them a manual clock's). */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const randomIds: IdSource = {
  newId: () => randomUUID(),
  newSecret: () => randomBytes(32).toString('base64url'),
};

/**
 * The logger of every handler and host: each string of a line passes through the core's redaction before
 * it is printed (message, details, an error's message and stack), so no line carries a key's secret.
 *
 * @example
 * const logger = redactingLogger({ logLevel: 'WARN' });
 */
export function redactingLogger(options: { logLevel?: LogLevel } = {}): Logger {
  return new Logger({
    serviceName: 'ringstore',
    ...options,
    jsonReplacerFn: (_name, value: unknown) => (typeof value === 'string' ? redactSecrets(value) : value),
  });
}

/** What the host of the handlers passes in; everything else is built from the configuration. */
export interface WiringOptions {
  config: RuntimeConfig;
  /**
   * Runs the transaction state machine. In AWS it is built from the configured state machine ARN; the
   * local cloud passes its in-process runner of the same definition.
   */
  orchestrator?: Orchestrator;
  /** Starts failover workflows. The local cloud passes its in-process runner; in AWS it is not built yet. */
  failovers?: FailoverStarter;
  /** Starts a backup region's promotion workflow (docs/dr.md). The local cloud passes its in-process runner. */
  promotions?: PromotionStarter;
  /** Starts rebalance workflows (docs/rebalancing.md). The local cloud passes its in-process runner. */
  rebalances?: RebalanceStarter;
  /** The fault controller of a test run (the local cloud's `/_faults` drives it); refused unless configured. */
  faults?: FaultController;
  /** Static credentials for local engines; in Lambda the SDK's default chain finds the role's. */
  awsCredentials?: { accessKeyId: string; secretAccessKey: string };
  clock?: Clock;
  ids?: IdSource;
  logger?: Logger;
}

type Resource = 'shardTables' | 'controlTable' | 'hintsTable' | 'blobBucket' | 'txnTable' | 'pendingTable' | 'feedTable';
type Access = 'read' | 'readWrite';

/**
 * One set of instances (one Lambda instance's, or the local cloud's process-wide set), seen through the
 * HandlerSpec of the handler that uses it.
 *
 * @example
 * const wiring = Wiring.forLambda('kvRead');   // module scope of a Lambda entry
 * const kv = kvService(wiring);                // builds the KV service and only what it needs
 */
export class Wiring {
  readonly config: RuntimeConfig;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly faults: FaultController | undefined;
  readonly orchestrator: Orchestrator | undefined;
  readonly failovers: FailoverStarter | undefined;
  readonly promotions: PromotionStarter | undefined;
  readonly rebalances: RebalanceStarter | undefined;
  readonly awsCredentials: WiringOptions['awsCredentials'];
  private readonly instances: Map<string, unknown>;
  private readonly options: WiringOptions;
  private loggerInstance: Logger | undefined;

  private constructor(
    options: WiringOptions,
    /** Undefined for the unrestricted view hosts and tools use; a handler's view checks its spec. */
    readonly spec: (HandlerSpec & { name: HandlerName }) | undefined,
    instances: Map<string, unknown>,
  ) {
    if (options.faults && !options.config.faultInjection) {
      throw new Error('a fault controller was passed in, but this configuration does not allow fault injection');
    }
    this.config = options.config;
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? randomIds;
    this.faults = options.faults;
    this.orchestrator = options.orchestrator;
    this.failovers = options.failovers;
    this.promotions = options.promotions;
    this.rebalances = options.rebalances;
    this.loggerInstance = options.logger;
    this.instances = instances;
    this.options = options;
    this.awsCredentials = options.awsCredentials;
  }

  /** The wiring of one Lambda function: configuration from its environment, its own instances. */
  static forLambda(handler: HandlerName, env: NodeJS.ProcessEnv = process.env): Wiring {
    return new Wiring({ config: loadConfig(env) }, { ...handlers[handler], name: handler }, new Map());
  }

  /** An unrestricted wiring for a host (the local cloud), scripts and the bench. */
  static create(options: WiringOptions): Wiring {
    return new Wiring(options, undefined, new Map());
  }

  /** The same instances with other host-given parts (the local cloud adds its state machine runner). */
  with(overrides: Partial<Omit<WiringOptions, 'config'>>): Wiring {
    return new Wiring({ ...this.options, ...overrides }, this.spec, this.instances);
  }

  /** The same instances (one process plays every function), limited to what `handler`'s spec declares. */
  forHandler(handler: HandlerName): Wiring {
    return new Wiring(this.options, { ...handlers[handler], name: handler }, this.instances);
  }

  get logger(): Logger {
    this.loggerInstance ??= redactingLogger();
    return this.loggerInstance;
  }

  /**
   * Builds `name` once per instance set (clients, adapters, caches: every handler of a process shares them,
   * as the handlers of one Lambda instance would).
   */
  shared<T>(name: string, build: () => T): T {
    if (!this.instances.has(name)) this.instances.set(name, build());
    return this.instances.get(name) as T;
  }

  /**
   * Builds `name` once per handler: services hold the ports their handler may use (some of them denied),
   * so two handlers sharing a process never share a service built for the other's spec.
   */
  perHandler<T>(name: string, build: () => T): T {
    return this.shared(`${this.spec?.name ?? '*'}:${name}`, build);
  }

  /** What was built under `name`, if anything (hosts close clients on the way out). */
  built(name: string): unknown {
    return this.instances.get(name);
  }

  /** Whether the handler's spec declares `access` to `resource` (always true for an unrestricted wiring). */
  allows(resource: Resource, access: Access = 'read'): boolean {
    if (!this.spec) return true;
    const declared = this.spec[resource] ?? 'none';
    return declared === 'readWrite' || (declared === 'read' && access === 'read');
  }

  /** Refuses, naming the spec, a capability the handler's spec does not declare, as IAM would refuse it in AWS. */
  assertDeclared(capability: 'drLink' | 'drKeyQueueDepth', what: string): void {
    if (this.spec && !this.spec[capability]) throw new RingstoreError('internal', this.undeclared(what));
  }

  private undeclared(what: string): string {
    return `handler ${this.spec?.name ?? '?'} may not ${what}: its HandlerSpec does not declare it`;
  }

  /**
   * The adapter of a table or bucket, shared by the process, or a denied stand-in when the handler's spec
   * does not declare `access` to `resource`. Only access that IAM grants per resource is checked this way.
   */
  port<T extends object>(resource: Resource, access: Access, name: string, build: () => T): T {
    if (this.allows(resource, access)) return this.shared(name, build);
    // A stand-in for the port: services that hold it can be built (a KV service in the read handler holds
    // the hint store only its writes use); a call fails at once, naming the spec, as the IAM role CDK
    // derives from the same spec would refuse it in AWS.
    const message = this.undeclared(`use ${resource} (${access})`);
    return new Proxy({} as T, {
      get: (_target, property) => (property === 'then' ? undefined : () => Promise.reject(new RingstoreError('internal', message))),
    });
  }
}
