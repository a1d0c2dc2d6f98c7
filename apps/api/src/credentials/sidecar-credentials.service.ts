import { Inject, Injectable } from '@nestjs/common';
import { applySidecarAcl, sha256Hex, sidecarRedisUrl } from '@fleet/contracts';
import { randomBytes } from 'node:crypto';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { QueuesService } from '../queues/queues.service.js';

export interface IssuedCredentials {
  reportToken: string;
  redisPassword: string;
  reportTokenHash: string;
  redisPasswordHash: string;
}

/** What a cluster's sidecar authenticates with: a report token (API) and a Redis ACL user. */
@Injectable()
export class SidecarCredentialsService {
  constructor(
    private readonly queues: QueuesService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  issue(): IssuedCredentials {
    const reportToken = randomBytes(32).toString('base64url');
    const redisPassword = randomBytes(32).toString('base64url');
    return {
      reportToken,
      redisPassword,
      reportTokenHash: sha256Hex(reportToken),
      redisPasswordHash: sha256Hex(redisPassword),
    };
  }

  /** (Re)creates the cluster's Redis user with every password hash currently valid. */
  async applyAcl(clusterId: string, passwordHashes: readonly string[]): Promise<void> {
    await applySidecarAcl(
      this.queues.connection,
      this.config.QUEUE_PREFIX,
      clusterId,
      passwordHashes,
    );
  }

  redisUrl(clusterId: string, password: string): string {
    return sidecarRedisUrl(
      this.config.FLEET_PUBLIC_REDIS_URL ?? this.config.REDIS_URL,
      clusterId,
      password,
    );
  }
}
