import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { type DynamicModule, Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { APP_FILTER } from '@nestjs/core';
import { GraphQLErrorFilter } from './common/graphql-error.filter.js';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuditModule } from './audit/audit.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ClustersModule } from './clusters/clusters.module.js';
import { API_CONFIG, type ApiConfig } from './config.js';
import { DatabaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { FleetModule } from './fleet/fleet.module.js';
import { queryLimitsPlugin } from './graphql/query-limits.js';
import { HealthModule } from './health/health.module.js';
import { QueuesModule } from './queues/queues.module.js';
import { ReportsModule } from './reports/reports.module.js';
import { RolloutsModule } from './rollouts/rollouts.module.js';

/**
 * The committed schema lives beside the sources, whether we run from src or from dist; a
 * deployment without sources keeps the schema in memory only.
 */
const sourceDir = dirname(fileURLToPath(import.meta.url)).replace(/\/dist\/apps\//, '/apps/');
const schemaFile: string | true = existsSync(join(sourceDir, 'main.ts')) ? join(sourceDir, 'schema.gql') : true;

@Module({})
export class AppModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      providers: [
        { provide: API_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: GraphQLErrorFilter },
      ],
      exports: [API_CONFIG],
      imports: [
        GraphQLModule.forRoot<ApolloDriverConfig>({
          driver: ApolloDriver,
          autoSchemaFile: schemaFile,
          sortSchema: true,
          introspection: true,
          subscriptions: { 'graphql-ws': true },
          plugins: [queryLimitsPlugin({ maxDepth: config.MAX_QUERY_DEPTH, maxCost: config.MAX_QUERY_COST })],
          // graphql-ws subscriptions authenticate with connectionParams.authorization.
          context: ({ req, extra }: { req?: unknown; extra?: { connectionParams?: { authorization?: string } } }) =>
            extra ? { connection: { authorization: extra.connectionParams?.authorization } } : { req },
        }),
        DatabaseModule,
        QueuesModule,
        AuthModule,
        AuditModule,
        EventsModule,
        HealthModule,
        ReportsModule,
        ClustersModule,
        RolloutsModule,
        FleetModule,
      ],
    };
  }
}
