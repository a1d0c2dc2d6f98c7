import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import {
  applySidecarAcl,
  killSidecarConnections,
  sha256Hex,
  SIDECAR_CREDENTIALS_QUEUE,
  sidecarRedisUrl,
} from '@fleet/contracts';
import { Queue } from 'bullmq';
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
export class SidecarCredentialsService implements OnModuleDestroy {
  private readonly sync: Queue;

  constructor(
    private readonly queues: QueuesService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {
    this.sync = new Queue(SIDECAR_CREDENTIALS_QUEUE, {
      connection: queues.connection,
      prefix: config.QUEUE_PREFIX,
    });
  }

  /**
   * Ends the previous credentials' grace period on time: the worker's ACL sync runs when it
   * ends (not only on its periodic schedule), drops the old password and cuts its connections.
   */
  async scheduleGraceEnd(clusterId: string, graceSeconds: number): Promise<void> {
    await this.sync.add(
      'grace-end',
      { clusterId },
      { delay: graceSeconds * 1000, removeOnComplete: 10, removeOnFail: 50 },
    );
  }

  /** Cuts every open connection of the cluster's sidecar user (see killSidecarConnections). */
  async killConnections(clusterId: string): Promise<void> {
    await killSidecarConnections(this.queues.connection, clusterId);
  }

  async onModuleDestroy(): Promise<void> {
    await this.sync.close();
  }

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
