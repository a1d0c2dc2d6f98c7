import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

/**
 * RFC 3339 date-times, as the API writes them. Nest's DateTime scalar hands `new Date(value)` to
 * resolvers whatever the value: "2026-13-45T99:00:00Z" became an Invalid Date that reached
 * PostgreSQL as an internal error, and a number became a date in 1970. This one refuses both,
 * before any resolver runs, with GraphQL's own error naming the argument and field.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

export function parseDateTime(value: unknown): Date {
  if (typeof value !== 'string')
    throw new GraphQLError(`must be an RFC 3339 date-time string, e.g. 2026-12-01T08:00:00Z`);
  const match = RFC3339.exec(value);
  const date = new Date(value);
  if (!match || Number.isNaN(date.getTime()))
    throw new GraphQLError(`must be an RFC 3339 date-time, e.g. 2026-12-01T08:00:00Z`);
  const [, year, month, day, hour, minute, second, , , offsetHours, offsetMinutes] = match;
  // Date rolls 2026-02-30 over into March: compare the fields as written.
  const days = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (
    Number(month) < 1 ||
    Number(month) > 12 ||
    Number(day) < 1 ||
    Number(day) > days ||
    Number(hour) > 23 ||
    Number(minute) > 59 ||
    Number(second) > 59 ||
    Number(offsetHours ?? 0) > 23 ||
    Number(offsetMinutes ?? 0) > 59
  )
    throw new GraphQLError(`must be an RFC 3339 date-time, e.g. 2026-12-01T08:00:00Z`);
  return date;
}

export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  description:
    'A date-time string at UTC, such as 2019-12-03T09:54:33Z, compliant with the date-time format.',
  serialize: (value) => (value instanceof Date ? value.toISOString() : null),
  parseValue: parseDateTime,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING)
      throw new GraphQLError(`must be an RFC 3339 date-time string, e.g. 2026-12-01T08:00:00Z`);
    return parseDateTime(ast.value);
  },
});
