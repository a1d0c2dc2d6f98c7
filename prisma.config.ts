// Prisma 6.19 runs migrate/generate offline only through the WASM schema engine behind a driver
// adapter (Prisma 7's CLI insists on downloading a native engine). See docs/DEVELOPMENT.md.
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { PrismaConfig } from 'prisma';

const url = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet';

// adapter-pg cannot map the catalog types `"char"`, `name`, `text`-like regproc and their arrays
// that the schema engine reads while introspecting (prisma/orm#27403): present them as text.
const CATALOG_TEXT_OIDS = new Map<number, number>([
  [18, 25],
  [19, 25],
  [24, 25],
  [2205, 25],
  [1002, 1009],
  [1003, 1009],
]);

function introspectionSafePool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({ connectionString, max: 2 });
  pool.on('connect', (client) => {
    const original = client.query.bind(client) as (...args: unknown[]) => unknown;
    const remap = (result: pg.QueryResult | undefined) => {
      for (const field of result?.fields ?? []) {
        field.dataTypeID = CATALOG_TEXT_OIDS.get(field.dataTypeID) ?? field.dataTypeID;
      }
      return result;
    };
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
      ...args: unknown[]
    ) => {
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        return original(...args.slice(0, -1), (err: Error | null, result?: pg.QueryResult) =>
          (callback as (e: Error | null, r?: pg.QueryResult) => void)(err, remap(result)),
        );
      }
      const returned = original(...args);
      return returned instanceof Promise ? returned.then(remap) : returned;
    };
  });
  return pool;
}

export default {
  experimental: { adapter: true },
  engine: 'js',
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  adapter: () => Promise.resolve(new PrismaPg(introspectionSafePool(url))),
} satisfies PrismaConfig;
