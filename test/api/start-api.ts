import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../../apps/api/src/app.module.js';
import { loadApiConfig } from '../../apps/api/src/config.js';

/** Boots the real API application in process on an ephemeral port. */
export async function startApi(env: Record<string, string>): Promise<{ app: INestApplication; url: string }> {
  const config = loadApiConfig({ API_PORT: '0', ...env });
  const app = await NestFactory.create(AppModule.forRoot(config), { logger: ['error'], abortOnError: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl() };
}
