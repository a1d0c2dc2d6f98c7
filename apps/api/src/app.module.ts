import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { type DynamicModule, Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { APP_FILTER } from '@nestjs/core';
import { maskInternalErrors } from './common/error-masking.js';
import { GraphQLErrorFilter } from './common/graphql-error.filter.js';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuditModule } from './audit/audit.module.js';
import { ApiTokensService } from './auth/api-tokens.service.js';
import { AuthModule } from './auth/auth.module.js';
import { subscriptionTokenWatch } from './auth/subscription-token-watch.js';
import { ClustersModule } from './clusters/clusters.module.js';
import { ConsoleModule } from './console/console.module.js';
import { DeadLettersModule } from './dead-letters/dead-letters.module.js';
import { HealthHistoryModule } from './health-history/health-history.module.js';
import { API_CONFIG, type ApiConfig } from './config.js';
import { DatabaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { FleetModule } from './fleet/fleet.module.js';
import {
  keepQueryLimitCode,
  queryLimitsPlugin,
  selectionLimitsRule,
  subscriptionLimits,
} from './graphql/query-limits.js';
import { noStorePlugins } from './graphql/no-store.plugin.js';
import { HealthModule } from './health/health.module.js';
import { graphqlMetricsPlugin } from './metrics/graphql-metrics.plugin.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { MetricsService } from './metrics/metrics.service.js';
import { OidcModule } from './oidc/oidc.module.js';
import { QueuesModule } from './queues/queues.module.js';
import { ReportsModule } from './reports/reports.module.js';
import { RolloutsModule } from './rollouts/rollouts.module.js';
import { PlansModule } from './plans/plans.module.js';
import { ProfilesModule } from './profiles/profiles.module.js';
import { StrategiesModule } from './strategies/strategies.module.js';
import { DateTimeScalar } from './common/date-time.scalar.js';

/**
 * The committed schema lives beside the sources, whether we run from src or from dist; a
 * deployment without sources keeps the schema in memory only.
 */
const sourceDir = dirname(fileURLToPath(import.meta.url)).replace(/\/dist\/apps\//, '/apps/');
const schemaFile: string | true = existsSync(join(sourceDir, 'main.ts'))
  ? join(sourceDir, 'schema.gql')
  : true;

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
        GraphQLModule.forRootAsync<ApolloDriverConfig>({
          driver: ApolloDriver,
          inject: [MetricsService, ApiTokensService],
          useFactory: (metrics: MetricsService, tokens: ApiTokensService) => {
            const limits = {
              maxDepth: config.MAX_QUERY_DEPTH,
              maxCost: config.MAX_QUERY_COST,
              maxFields: config.MAX_QUERY_FIELDS,
              maxAliases: config.MAX_QUERY_ALIASES,
            };
            const masked = maskInternalErrors((line) => console.error(JSON.stringify(line)));
            return {
              autoSchemaFile: schemaFile,
              sortSchema: true,
              // Same name and description as Nest's DateTime, stricter parsing (date-time.scalar).
              buildSchemaOptions: { scalarsMap: [{ type: Date, scalar: DateTimeScalar }] },
              // The schema is public in the repository; a production API need not hand it to
              // anyone probing it (clients are generated from the committed schema.gql).
              introspection: config.GRAPHQL_INTROSPECTION
                ? config.GRAPHQL_INTROSPECTION === 'true'
                : config.NODE_ENV !== 'production',
              includeStacktraceInErrorResponses: false,
              formatError: (formatted, error) =>
                masked(keepQueryLimitCode(formatted, error), error),
              // Fields and aliases, before the specified rules read the document (HTTP; the
              // socket checks them first in onSubscribe).
              validationRules: [selectionLimitsRule(limits)],
              subscriptions: {
                'graphql-ws': { ...subscriptionTokenWatch(tokens), ...subscriptionLimits(limits) },
              },
              // One operation per HTTP request: a batch would multiply every per-request limit.
              allowBatchedHttpRequests: false,
              plugins: [
                queryLimitsPlugin(limits),
                graphqlMetricsPlugin(metrics),
                ...noStorePlugins(),
              ],
              // graphql-ws subscriptions authenticate with connectionParams.authorization.
              // graphql-ws hands the context function its own Context: connectionParams sits beside extra.
              context: ({
                req,
                extra,
                connectionParams,
              }: {
                req?: unknown;
                extra?: unknown;
                connectionParams?: { authorization?: string };
              }) =>
                extra
                  ? { connection: { authorization: connectionParams?.authorization } }
                  : { req },
            };
          },
        }),
        DatabaseModule,
        QueuesModule,
        AuthModule,
        AuditModule,
        EventsModule,
        MetricsModule,
        HealthModule,
        ReportsModule,
        ClustersModule,
        DeadLettersModule,
        HealthHistoryModule,
        RolloutsModule,
        PlansModule,
        ProfilesModule,
        StrategiesModule,
        FleetModule,
        OidcModule,
        ConsoleModule,
      ],
    };
  }
}
