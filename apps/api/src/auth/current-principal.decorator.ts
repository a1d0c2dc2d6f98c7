import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import { principalOf } from './auth.guard.js';
import type { Principal } from './principal.js';

/** The authenticated caller of a resolver. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal =>
    principalOf(GqlExecutionContext.create(context).getContext()),
);
