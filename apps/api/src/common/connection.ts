import { Field, Int, ObjectType } from '@nestjs/graphql';
import { userInputError } from './errors.js';

@ObjectType({ description: 'Relay pagination state.' })
export class PageInfo {
  @Field()
  hasNextPage!: boolean;

  @Field()
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true })
  startCursor!: string | null;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

export interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/** Validated Relay arguments: one direction, a size of 1–100, at most one cursor per side. */
export function pageWindow(args: PageArgs, defaultSize = 20): { size: number; backward: boolean } {
  for (const key of ['first', 'last'] as const) {
    const value = args[key];
    if (value != null && (!Number.isInteger(value) || value < 1 || value > 100)) {
      throw userInputError(key, 'must be between 1 and 100');
    }
  }
  if (args.first != null && args.last != null)
    throw userInputError('last', 'cannot be combined with first');
  const backward = args.last != null;
  return { size: args.first ?? args.last ?? defaultSize, backward };
}

export const encodeCursor = (parts: unknown[]): string =>
  Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');

export function decodeCursor(cursor: string, field: string): unknown[] {
  try {
    const parts: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parts)) return parts;
  } catch {
    // fall through
  }
  throw userInputError(field, 'is not a cursor returned by this API');
}

/**
 * A Relay connection type `${name}Connection`. `extended`: the caller subclasses it with fields of
 * its own and registers the subclass under that name (this one is then abstract).
 */
export function Connection<T>(name: string, node: new () => T, { extended = false } = {}) {
  @ObjectType(`${name}Edge`)
  class Edge {
    @Field()
    cursor!: string;

    @Field(() => node)
    node!: T;
  }

  @ObjectType(`${name}Connection`, { isAbstract: extended })
  class ConnectionType {
    @Field(() => [Edge])
    edges!: Edge[];

    @Field(() => [node])
    nodes!: T[];

    @Field(() => PageInfo)
    pageInfo!: PageInfo;

    @Field(() => Int)
    totalCount!: number;
  }
  return ConnectionType;
}
