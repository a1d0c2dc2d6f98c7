import { Inject, Injectable } from '@nestjs/common';
import { Prisma, type PrismaClient } from '@fleet/database';
import { createHash } from 'node:crypto';
import { AuditService } from '../audit/audit.service.js';
import { inScope, type Principal } from '../auth/principal.js';
import { decodeCursor, encodeCursor, pageWindow, type PageArgs } from '../common/connection.js';
import {
  conflictError,
  forbiddenError,
  notFoundError,
  parseInput,
  userInputError,
} from '../common/errors.js';
import { toGlobalId } from '../common/global-id.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import {
  SidecarCredentialsService,
  type IssuedCredentials,
} from '../credentials/sidecar-credentials.service.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import { deleteSidecarAcl } from '@fleet/contracts';
import { DRIVER_REGISTRY, findDriver, supportedPairs } from '@fleet/cloud-provider';
import { QueuesService } from '../queues/queues.service.js';
import { bootstrapManifest } from './bootstrap-manifest.js';
import {
  Labels,
  NodePoolNameSchema,
  ExpectedGeneration,
  RegisterClusterSchema,
  SetKarpenterSchema,
} from './cluster-input.schemas.js';
import { toCluster, type ClusterRow, type ClusterView } from './cluster.mapper.js';
import {
  clusterWhere,
  countSql,
  fromPageRow,
  inScopeSql,
  pageSql,
  type PageRow,
} from './cluster-query.js';
import {
  applyDesiredStateChange,
  clusterSnapshot,
  commitDesiredStateChange,
  lockDesiredState,
  type DesiredStateChange,
} from '@fleet/desired-state';
import {
  ClusterOrderField,
  OrderDirection,
  type ClusterFilter,
  type ClusterOrder,
  type NodeClassOverridesInput,
  type RegisterClusterInput,
  type SetKarpenterInput,
  type UpsertNodePoolInput,
} from './dto/cluster.inputs.js';
import { KarpenterSpecValidator } from './karpenter-spec.validator.js';
import type { Cluster, ClusterConnection, RegisterClusterPayload } from './models/cluster.model.js';

type Tx = Prisma.TransactionClient;

export const withEverything = {
  desired: true,
  status: true,
  nodePools: { orderBy: { name: 'asc' } },
} satisfies Prisma.ClusterInclude;

export const hashToken = (token: string): string =>
  createHash('sha256').update(token).digest('hex');

const DEFAULT_ORDER: ClusterOrder = {
  field: ClusterOrderField.NAME,
  direction: OrderDirection.ASC,
};

@Injectable()
export class ClustersService {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly queues: QueuesService,
    private readonly audit: AuditService,
    private readonly specs: KarpenterSpecValidator,
    private readonly events: FleetEventsService,
    private readonly credentials: SidecarCredentialsService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {
    this.db = prisma.client;
  }

  /** A cluster the caller may see; NOT_FOUND otherwise (a scoped token learns nothing else). */
  async get(principal: Principal, uid: string): Promise<Cluster> {
    const row = await this.db.cluster.findUnique({ where: { id: uid }, include: withEverything });
    if (!row || !inScope(principal, row.labels))
      throw notFoundError('cluster', toGlobalId('Cluster', uid));
    return this.toModel(row);
  }

  async list(
    principal: Principal,
    page: PageArgs,
    filter: ClusterFilter | null | undefined,
    orderBy: ClusterOrder | null | undefined,
    wantsTotal = true,
  ): Promise<ClusterConnection> {
    const { size, backward } = pageWindow(page);
    const order = orderBy ?? DEFAULT_ORDER;
    const where = clusterWhere(filter, principal, this.config.STALE_AFTER_SECONDS);
    const cursorArg = backward ? page.before : page.after;
    let cursor: [string, string] | undefined;
    if (cursorArg) {
      const parts = decodeCursor(cursorArg, backward ? 'before' : 'after');
      if (
        parts.length !== 3 ||
        parts[0] !== order.field ||
        typeof parts[1] !== 'string' ||
        typeof parts[2] !== 'string'
      ) {
        throw userInputError(
          backward ? 'before' : 'after',
          'is a cursor of another ordering; start again without it',
        );
      }
      cursor = [parts[1], parts[2]];
    }
    const [rows, [{ count }]] = await Promise.all([
      this.db.$queryRaw<PageRow[]>(
        pageSql({ where, order, size, backward, ...(cursor ? { cursor } : {}) }),
      ),
      wantsTotal
        ? this.db.$queryRaw<[{ count: number }]>(countSql(where))
        : Promise.resolve([{ count: 0 }] as [{ count: number }]),
    ]);
    const more = rows.length > size;
    const pageRows = rows.slice(0, size);
    if (backward) pageRows.reverse();
    const edges = pageRows.map((r) => ({
      cursor: encodeCursor([order.field, r.sort, r.id]),
      node: this.toModel(fromPageRow(r)),
    }));
    return {
      edges,
      nodes: edges.map((e) => e.node),
      pageInfo: {
        hasNextPage: backward ? Boolean(page.before) : more,
        hasPreviousPage: backward ? more : Boolean(page.after),
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
      totalCount: count,
    };
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
            reportTokenHash: credentials.reportTokenHash,
            redisPasswordHash: credentials.redisPasswordHash,
            desired: { create: {} },
            status: { create: {} },
            reconcileRuns: { create: { generation: 1 } },
          },
          include: withEverything,
        });
        await this.audit.record(
          tx,
          principal,
          'registerCluster',
          created.id,
          null,
          await clusterSnapshot(tx, created.id),
        );
        return created;
      });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw userInputError('input.name', `a cluster named "${valid.name}" is already registered`);
      }
      throw err;
    }
    // If Redis refuses now, the worker's credential sync recreates the user from the stored hash.
    await this.credentials.applyAcl(row.id, [credentials.redisPasswordHash]).catch(() => undefined);
    // The first order tells the sidecar what "nothing enabled yet" means for this cluster.
    await this.queues.requestReconcile({ clusterId: row.id, generation: 1 });
    await this.changed(row.id);
    return { cluster: this.toModel(row), ...this.credentialsPayload(row, credentials) };
  }

  /** The one-time secrets of a (re)issue, and the manifest that hands them to the sidecar. */
  credentialsPayload(
    row: { id: string; name: string; topology: string; hcpNamespace: string | null },
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
      }),
    };
  }

  async deregister(principal: Principal, uid: string): Promise<Cluster> {
    return this.db
      .$transaction(async (tx) => {
        await this.lockInScope(tx, principal, uid);
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
        return this.toModel(row);
      })
      .then(async (cluster) => {
        await deleteSidecarAcl(this.queues.connection, uid).catch(() => undefined);
        return cluster;
      });
  }

  /** Subscribers learn of the change; losing the event costs freshness, never state. */
  private async changed(clusterId: string): Promise<void> {
    await this.events.publish({ type: 'cluster-changed', clusterId }).catch(() => undefined);
  }

  /**
   * New report token and Redis password; the previous ones keep working for the grace period so
   * the sidecar can be re-configured without a gap.
   */
  async rotateCredentials(principal: Principal, uid: string) {
    const issued = this.credentials.issue();
    const previousValidUntil = new Date(Date.now() + this.config.CREDENTIAL_GRACE_SECONDS * 1000);
    const { row, previousRedisPasswordHash } = await this.db.$transaction(async (tx) => {
      await this.lockInScope(tx, principal, uid);
      const current = await tx.cluster.findUniqueOrThrow({ where: { id: uid } });
      const updated = await tx.cluster.update({
        where: { id: uid },
        data: {
          reportTokenHash: issued.reportTokenHash,
          redisPasswordHash: issued.redisPasswordHash,
          previousReportTokenHash: current.reportTokenHash,
          previousRedisPasswordHash: current.redisPasswordHash,
          previousCredentialsExpireAt: previousValidUntil,
        },
        include: withEverything,
      });
      const snapshot = await clusterSnapshot(tx, uid);
      await this.audit.record(tx, principal, 'rotateClusterCredentials', uid, snapshot, snapshot);
      return { row: updated, previousRedisPasswordHash: current.redisPasswordHash };
    });
    await this.credentials.applyAcl(uid, [issued.redisPasswordHash, previousRedisPasswordHash]);
    return {
      cluster: this.toModel(row),
      ...this.credentialsPayload(row, issued),
      previousValidUntil,
    };
  }

  /** Labels are fleet metadata, not desired cluster state: no generation bump, no reconcile. */
  async updateLabels(principal: Principal, uid: string, labels: unknown): Promise<Cluster> {
    const valid = parseInput(Labels, labels, 'labels');
    if (!inScope(principal, valid)) {
      throw forbiddenError(`token ${principal.name} cannot move a cluster outside its selector`);
    }
    const row = await this.db.$transaction(async (tx) => {
      await this.lockInScope(tx, principal, uid);
      const before = await clusterSnapshot(tx, uid);
      await tx.cluster.update({ where: { id: uid }, data: { labels: valid } });
      await this.audit.record(
        tx,
        principal,
        'updateClusterLabels',
        uid,
        before,
        await clusterSnapshot(tx, uid),
      );
      return tx.cluster.findUniqueOrThrow({ where: { id: uid }, include: withEverything });
    });
    await this.changed(uid);
    return this.toModel(row);
  }

  async setKarpenter(
    principal: Principal,
    uid: string,
    input: SetKarpenterInput,
    action = 'setKarpenter',
  ): Promise<Cluster> {
    const { expectedGeneration, ...fields } = parseInput(SetKarpenterSchema, input, 'input');
    const change = Object.fromEntries(
      Object.entries(fields).filter(([, v]) => v != null),
    ) as DesiredStateChange;
    return this.changeDesiredState(principal, uid, action, expectedGeneration, async (tx) => {
      await applyDesiredStateChange(tx, uid, change);
    });
  }

  async upsertNodePool(
    principal: Principal,
    uid: string,
    input: UpsertNodePoolInput,
  ): Promise<Cluster> {
    const name = parseInput(NodePoolNameSchema, input.name, 'input.name');
    const expected = parseInput(
      ExpectedGeneration,
      input.expectedGeneration,
      'input.expectedGeneration',
    );
    const violation = this.specs.validateNodePool(name, input.spec)[0];
    if (violation)
      throw userInputError(
        `input.spec${violation.field ? `.${violation.field}` : ''}`,
        violation.reason,
      );
    const spec = input.spec as Record<string, unknown>;
    return this.changeDesiredState(principal, uid, 'upsertNodePool', expected, async (tx) => {
      await applyDesiredStateChange(tx, uid, { upsertNodePool: { name, spec } });
    });
  }

  async deleteNodePool(
    principal: Principal,
    uid: string,
    name: string,
    expectedGeneration?: number | null,
  ): Promise<Cluster> {
    const expected = parseInput(ExpectedGeneration, expectedGeneration, 'expectedGeneration');
    return this.changeDesiredState(principal, uid, 'deleteNodePool', expected, async (tx) => {
      if (
        (await applyDesiredStateChange(tx, uid, { deleteNodePool: name })) === 'no-such-nodepool'
      ) {
        throw notFoundError('NodePool', name);
      }
    });
  }

  async setNodeClassOverrides(
    principal: Principal,
    uid: string,
    input: NodeClassOverridesInput,
  ): Promise<Cluster> {
    const expected = parseInput(
      ExpectedGeneration,
      input.expectedGeneration,
      'input.expectedGeneration',
    );
    const overrides = Object.fromEntries(
      (['blockDeviceMappings', 'tags', 'metadataOptions', 'kubelet'] as const)
        .filter((k) => input[k] != null)
        .map((k) => [k, input[k]]),
    );
    return this.changeDesiredState(
      principal,
      uid,
      'setNodeClassOverrides',
      expected,
      async (tx) => {
        const cluster = await tx.cluster.findUniqueOrThrow({
          where: { id: uid },
          select: { platform: true },
        });
        const violation = this.specs.validateNodeClassOverrides(cluster.platform, overrides)[0];
        if (violation)
          throw userInputError(
            `input${violation.field ? `.${violation.field}` : ''}`,
            violation.reason,
          );
        await tx.desiredState.update({
          where: { clusterId: uid },
          data: { nodeClassOverrides: overrides as Prisma.InputJsonObject },
        });
      },
    );
  }

  /** Re-sends the current desired state even if the cluster reports it applied. */
  async forceReconcile(principal: Principal, uid: string): Promise<Cluster> {
    const row = await this.db.$transaction(async (tx) => {
      await this.lockInScope(tx, principal, uid);
      const snapshot = await clusterSnapshot(tx, uid);
      await this.audit.record(tx, principal, 'reconcileCluster', uid, snapshot, snapshot);
      return tx.cluster.findUniqueOrThrow({ where: { id: uid }, include: withEverything });
    });
    await this.queues.requestReconcile({
      clusterId: uid,
      generation: row.desired!.generation,
      force: true,
    });
    return this.toModel(row);
  }

  /**
   * The one path by which desired state changes: the change, the generation bump, the reconcile
   * run and the audit event commit together, then the worker is asked to reconcile. If Redis is
   * down at that moment the resync finds `generation > observedGeneration` and dispatches anyway.
   */
  private async changeDesiredState(
    principal: Principal,
    uid: string,
    action: string,
    expectedGeneration: number | null | undefined,
    change: (tx: Tx) => Promise<void>,
  ): Promise<Cluster> {
    const row = await this.db.$transaction(async (tx) => {
      const current = await this.lockInScope(tx, principal, uid);
      if (expectedGeneration != null && current !== expectedGeneration) {
        throw conflictError(
          `cluster is at generation ${current}, not the expected ${expectedGeneration}`,
        );
      }
      await commitDesiredStateChange(tx, { clusterId: uid, actor: principal, action, change });
      return tx.cluster.findUniqueOrThrow({ where: { id: uid }, include: withEverything });
    });
    await this.queues.requestReconcile({ clusterId: uid, generation: row.desired!.generation });
    await this.changed(uid);
    return this.toModel(row);
  }

  /** Row lock on the desired state (mutations of one cluster serialize); scope enforced in SQL. */
  private async lockInScope(tx: Tx, principal: Principal, uid: string): Promise<number> {
    const visible = await tx.$queryRaw<{ id: string }[]>(inScopeSql(uid, principal));
    const generation = visible.length ? await lockDesiredState(tx, uid) : undefined;
    if (generation === undefined) throw notFoundError('cluster', toGlobalId('Cluster', uid));
    return generation;
  }

  toModel(row: ClusterView): Cluster {
    return toCluster(row, this.config.STALE_AFTER_SECONDS);
  }
}
