import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.js';

export * from './generated/prisma/client.js';

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/karpenter_fleet';

/** A Prisma client on the pg driver adapter (Prisma's query compiler, no native engine). */
export function createPrismaClient(
  databaseUrl: string,
  options: { poolSize?: number } = {},
): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  return new PrismaClient({ adapter });
}
