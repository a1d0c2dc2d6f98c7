import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { AppModule } from '../../apps/api/src/app.module.js';
import { loadApiConfig } from '../../apps/api/src/config.js';
import { listen } from '../../apps/api/src/http-server.js';
import { graphqlClient } from '../support/graphql-client.js';

export type Gql = ReturnType<typeof graphqlClient>;

export interface RunningApi {
  app: INestApplication;
  url: string;
  /** GraphQL as the bootstrap admin. */
  admin: Gql;
  adminToken: string;
  /** GraphQL as someone holding `secret` (or nobody, without one). */
  as(secret?: string): Gql;
  /** Creates a token through the API and returns its secret. */
  createToken(
    role: 'VIEWER' | 'OPERATOR' | 'ADMIN',
    options?: { labelSelector?: string; expiresAt?: string; name?: string },
  ): Promise<string>;
}

/** Boots the real API application in process on an ephemeral port, with a bootstrap admin. */
export async function startApi(env: Record<string, string>): Promise<RunningApi> {
  const adminToken = `bootstrap-${randomBytes(16).toString('hex')}`;
  const config = loadApiConfig({ API_PORT: '0', FLEET_BOOTSTRAP_TOKEN: adminToken, ...env });
  const app = await NestFactory.create(AppModule.forRoot(config), {
    logger: ['error'],
    abortOnError: false,
  });
  const url = await listen(app, config.API_PORT, '127.0.0.1');
  const as = (secret?: string) =>
    graphqlClient(`${url}/graphql`, secret ? { authorization: `Bearer ${secret}` } : {});
  const admin = as(adminToken);
  let tokens = 0;
  return {
    app,
    url,
    admin,
    adminToken,
    as,
    async createToken(role, options = {}) {
      const res = await admin<{ createApiToken: { secret: string } }>(
        `mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) { secret } }`,
        { input: { name: options.name ?? `${role.toLowerCase()}-${++tokens}`, role, ...options } },
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      return res.data.createApiToken.secret;
    },
  };
}
