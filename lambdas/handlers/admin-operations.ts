// The admin handler's operations, as each route group's module provides its share of them.
import type { OperationIdOf } from '../../schemas/topology';
import type { Operation } from '../http/router';

/** Operations of the admin handler, by operationId (the router checks that together they are all of them). */
export type AdminOperations<Id extends OperationIdOf<'admin'>> = Record<Id, Operation>;
