import { Inject, Injectable } from '@nestjs/common';
import { Prisma, type PrismaClient } from '@fleet/database';
import { AuditService } from '../audit/audit.service.js';
import { inScope, type Principal } from '../auth/principal.js';
import { forbiddenError, parseInput, userInputError } from '../common/errors.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import {
  SidecarCredentialsService,
  type IssuedCredentials,
} from '../credentials/sidecar-credentials.service.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import { deleteSidecarAcl } from '@fleet/contracts';
import {
  DRIVER_REGISTRY,
  OPENSHIFT_CLUSTER_API_NAMESPACE,
  findDriver,
  supportedPairs,
} from '@fleet/cloud-provider';
import { QueuesService } from '../queues/queues.service.js';
import { bootstrapManifest } from './bootstrap-manifest.js';
import { RegisterClusterSchema } from './cluster-input.schemas.js';
import { type ClusterRow } from './cluster.mapper.js';
import { clusterSnapshot, materializeEffectiveState, syncMemberships } from '@fleet/desired-state';
import { type RegisterClusterInput } from './dto/cluster.inputs.js';
import type { Cluster, RegisterClusterPayload } from './models/cluster.model.js';
import { withEverything, lockInScope, clusterChanged } from './cluster-access.js';
import { ClusterQueries } from './cluster-queries.service.js';

/** A rotation's grace period is at most a week: old credentials must end. */
export const MAX_GRACE_SECONDS = 7 * 86_400;

/** A cluster enters and leaves the fleet, and its sidecar credentials are issued and rotated. */
@Injectable()
export class ClusterRegistration {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly queries: ClusterQueries,
    private readonly queues: QueuesService,
    private readonly audit: AuditService,
    private readonly events: FleetEventsService,
    private readonly credentials: SidecarCredentialsService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {
    this.db = prisma.client;
  }

  async register(
    principal: Principal,
    input: RegisterClusterInput,
  ): Promise<RegisterClusterPayload> {
    const valid = parseInput(RegisterClusterSchema, input, 'input');
    if (!findDriver(valid.platform, valid.topology)) {
      // Name the field that makes the pair unsupported: the platform, unless it has a driver
      // for another topology.
      const platformServed = DRIVER_REGISTRY.some((d) => d.platform === valid.platform);
      throw userInputError(
        platformServed ? 'input.topology' : 'input.platform',
        `no driver for platform ${valid.platform} with topology ${valid.topology} yet; supported platform/topology pairs: ${supportedPairs()}`,
      );
    }
    if (!inScope(principal, valid.labels ?? {})) {
      throw forbiddenError(
        `token ${principal.name} may only register clusters whose labels match its selector`,
      );
    }
    const credentials = this.credentials.issue();
    let row: ClusterRow;
    try {
      row = await this.db.$transaction(async (tx) => {
        const created = await tx.cluster.create({
          data: {
            name: valid.name,
            topology: valid.topology,
            platform: valid.platform,
            region: valid.region,
            infraID: valid.infraID ?? null,
            labels: valid.labels ?? {},
            managementCluster: valid.managementCluster ?? null,
            hcpNamespace: valid.hcpNamespace ?? null,
            ...(valid.platform === 'CAPI'
              ? {
                  clusterApiName: valid.clusterApiName ?? null,
                  clusterApiNamespace: valid.clusterApiNamespace ?? OPENSHIFT_CLUSTER_API_NAMESPACE,
                  infrastructureProvider: valid.infrastructureProvider ?? 'aws',
                }
              : {}),
            reportTokenHash: credentials.reportTokenHash,
            redisPasswordHash: credentials.redisPasswordHash,
            desired: { create: {} },
            status: { create: {} },
            reconcileRuns: { create: { generation: 1 } },
          },
          include: withEverything,
        });
        // Membership follows labels from the start: the profiles its labels match are in its
        // generation-1 order (docs/PROFILES.md), so it never runs without them first.
        const bound = await syncMemberships(tx, created.id, valid.labels ?? {});
        if (bound) await materializeEffectiveState(tx, created.id);
        await this.audit.record(
          tx,
          principal,
          'registerCluster',
          created.id,
          null,
          await clusterSnapshot(tx, created.id),
        );
        return bound
          ? tx.cluster.findUniqueOrThrow({ where: { id: created.id }, include: withEverything })
          : created;
      });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw userInputError('input.name', `a cluster named "${valid.name}" is already registered`);
      }
      throw err;
    }
    await afterCommit('registerCluster', row.id, [
      // Else the worker's ACL sync recreates the user from the stored hash.
      () => this.credentials.applyAcl(row.id, [credentials.redisPasswordHash]),
      // The first order tells the sidecar what "nothing enabled yet" means for this cluster;
      // else the worker's resync dispatches it (generation 1 above observed 0).
      () => this.queues.requestReconcile({ clusterId: row.id, generation: 1 }),
      () => clusterChanged(this.events, row.id),
    ]);
    return { cluster: this.queries.toModel(row), ...this.credentialsPayload(row, credentials) };
  }

  /** The one-time secrets of a (re)issue, and the manifest that hands them to the sidecar. */
  credentialsPayload(
    row: {
      id: string;
      name: string;
      topology: string;
      hcpNamespace: string | null;
      platform?: string;
      managementCluster?: string | null;
      clusterApiName?: string | null;
      clusterApiNamespace?: string | null;
    },
    issued: IssuedCredentials,
  ) {
    const redisUrl = this.credentials.redisUrl(row.id, issued.redisPassword);
    return {
      reportToken: issued.reportToken,
      redisPassword: issued.redisPassword,
      redisUrl,
      bootstrapManifest: bootstrapManifest({
        clusterUid: row.id,
        clusterName: row.name,
        reportToken: issued.reportToken,
        apiUrl: this.config.FLEET_PUBLIC_URL,
        redisUrl,
        queuePrefix: this.config.QUEUE_PREFIX,
        image: this.config.SIDECAR_IMAGE,
        namespace:
          row.topology === 'HOSTED' ? (row.hcpNamespace ?? 'karpenter-fleet') : 'karpenter-fleet',
        hosted: row.topology === 'HOSTED',
        ...(row.platform === 'CAPI' && row.clusterApiName
          ? {
              clusterApi: {
                name: row.clusterApiName,
                namespace: row.clusterApiNamespace ?? OPENSHIFT_CLUSTER_API_NAMESPACE,
                separateManagementCluster: !!row.managementCluster,
              },
            }
          : {}),
      }),
    };
  }

  async deregister(principal: Principal, uid: string): Promise<Cluster> {
    return this.db
      .$transaction(async (tx) => {
        await lockInScope(tx, principal, uid);
        const row = await tx.cluster.findUniqueOrThrow({
          where: { id: uid },
          include: withEverything,
        });
        await this.audit.record(
          tx,
          principal,
          'deregisterCluster',
          uid,
          await clusterSnapshot(tx, uid),
          null,
        );
        await tx.cluster.delete({ where: { id: uid } });
        return this.queries.toModel(row);
      })
      .then(async (cluster) => {
        // The replicas' cached report credentials go first, and every step is bounded: a Redis
        // that hangs must not hold the mutation nor the invalidation back.
        await afterCommit('deregisterCluster', uid, [
          () => this.events.publish({ type: 'credentials-changed', clusterId: uid }),
          () => deleteSidecarAcl(this.queues.connection, uid),
          () => this.queues.forgetClusterIngestState(uid),
        ]);
        return cluster;
      });
  }

  /**
   * New report token and Redis password; the previous ones keep working for the grace period so
   * the sidecar can be re-configured without a gap.
   */
  async rotateCredentials(principal: Principal, uid: string, gracePeriodSeconds?: number | null) {
    const grace = gracePeriodSeconds ?? this.config.CREDENTIAL_GRACE_SECONDS;
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_SECONDS) {
      throw userInputError('gracePeriodSeconds', `must be between 0 and ${MAX_GRACE_SECONDS}`);
    }
    const issued = this.credentials.issue();
    const previousValidUntil = new Date(Date.now() + grace * 1000);
    const { row, previousRedisPasswordHash } = await this.db.$transaction(async (tx) => {
      await lockInScope(tx, principal, uid);
      const current = await tx.cluster.findUniqueOrThrow({ where: { id: uid } });
      const updated = await tx.cluster.update({
        where: { id: uid },
        data: {
          reportTokenHash: issued.reportTokenHash,
          redisPasswordHash: issued.redisPasswordHash,
          // Without a grace period the previous credentials end now: nothing to remember.
          previousReportTokenHash: grace ? current.reportTokenHash : null,
          previousRedisPasswordHash: grace ? current.redisPasswordHash : null,
          previousCredentialsExpireAt: grace ? previousValidUntil : null,
        },
        include: withEverything,
      });
      const snapshot = await clusterSnapshot(tx, uid);
      await this.audit.record(tx, principal, 'rotateClusterCredentials', uid, snapshot, snapshot);
      return { row: updated, previousRedisPasswordHash: current.redisPasswordHash };
    });
    // Every replica drops the cached report credentials at once (the cache outlives a rotation
    // only if this event is lost, and then for at most its lifetime).
    await afterCommit('rotateClusterCredentials', uid, [
      () => this.events.publish({ type: 'credentials-changed', clusterId: uid }),
    ]);
    await afterCommit(
      'rotateClusterCredentials',
      uid,
      grace
        ? [
            () =>
              this.credentials.applyAcl(uid, [issued.redisPasswordHash, previousRedisPasswordHash]),
            () => this.credentials.scheduleGraceEnd(uid, grace),
          ]
        : [
            () => this.credentials.applyAcl(uid, [issued.redisPasswordHash]),
            () => this.credentials.killConnections(uid),
          ],
    );
    return {
      cluster: this.queries.toModel(row),
      ...this.credentialsPayload(row, issued),
      previousValidUntil,
    };
  }
}

/** How long a request waits for Redis after its PostgreSQL commit before answering anyway. */
export const AFTER_COMMIT_REDIS_MS = 2_000;

/**
 * Redis work after the PostgreSQL commit that issued one-time secrets. The commit stands, so the
 * secrets must reach the caller whatever Redis does. The steps run in order (the sidecar's user
 * exists before its first order), each within AFTER_COMMIT_REDIS_MS; the first that fails or
 * times out is logged and the rest are left to their repair rather than waited for: the worker's
 * ACL sync recreates sidecar users from the stored hashes, its resync dispatches orders from
 * PostgreSQL, and a lost event costs freshness only. A command to a Redis that is down stays in
 * ioredis' queue and is sent if Redis returns.
 */
async function afterCommit(
  action: string,
  clusterId: string,
  steps: (() => Promise<unknown>)[],
): Promise<void> {
  for (const step of steps) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not answer within ${AFTER_COMMIT_REDIS_MS} ms`)),
        AFTER_COMMIT_REDIS_MS,
      );
    });
    try {
      await Promise.race([step(), deadline]);
    } catch (err) {
      console.warn(
        JSON.stringify({
          level: 'warn',
          msg: 'Redis failed after the commit; the worker repairs what is left',
          action,
          clusterId,
          err: err instanceof Error ? err.message : String(err),
        }),
      );
      return;
    } finally {
      clearTimeout(timer);
    }
  }
}
