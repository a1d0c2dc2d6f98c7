import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { createDatabaseClients, type PrismaClient } from '@fleet/database';
import type pg from 'pg';
import { API_CONFIG, type ApiConfig } from '../config.js';

/**
 * The one Prisma client of the API process, and the pg pool under it for hot reads in SQL
 * (`queryRows`); closed with the Nest application.
 */
@Injectable()
export class PrismaService implements OnModuleDestroy {
  readonly client: PrismaClient;
  readonly pool: pg.Pool;

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    ({ prisma: this.client, pool: this.pool } = createDatabaseClients(config.DATABASE_URL));
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.$disconnect();
  }
}
