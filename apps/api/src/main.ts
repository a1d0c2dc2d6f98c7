import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { onStoredSpecWarning } from '@fleet/desired-state';
import { pino } from 'pino';
import { AppModule } from './app.module.js';
import { loadApiConfig, productionRuntimeProblem } from './config.js';
import { listen } from './http-server.js';

async function bootstrap(): Promise<void> {
  const problem = productionRuntimeProblem();
  if (problem) throw new Error(problem);
  const config = loadApiConfig();
  // Stored specs the schema no longer accepts are read leniently; the API logs what it dropped.
  const log = pino({ name: 'api', level: process.env.LOG_LEVEL ?? 'info' });
  onStoredSpecWarning((w) =>
    log.warn(
      { spec: w.spec, field: w.field },
      `stored ${w.spec}: ${w.field || '(whole)'}: ${w.reason}`,
    ),
  );
  const app = await NestFactory.create(AppModule.forRoot(config), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  const url = await listen(app, config.API_PORT, config.API_HOST);
  console.log(`karpenter-fleet api listening on ${url}/graphql`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
