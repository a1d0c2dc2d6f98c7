import { Inject, Injectable } from '@nestjs/common';
import { Prisma, type PrismaClient } from '@fleet/database';
import { createHash, randomBytes } from 'node:crypto';
import { conflictError, notFoundError, parseInput, userInputError } from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';
import { QueuesService } from '../queues/queues.service.js';
import type { ClusterFilter, RegisterClusterInput, SetKarpenterInput, UpsertNodePoolInput } from './dto/cluster.inputs.js';
import {
  ExpectedGeneration,
  NodePoolNameSchema,
  RegisterClusterSchema,
  SetKarpenterSchema,
} from './cluster-input.schemas.js';
import { toCluster, type ClusterRow } from './cluster.mapper.js';
import type { Cluster, ClusterConnection } from './models/cluster.model.js';
import { NODE_POOL_SPEC_VALIDATOR, type NodePoolSpecValidator } from './node-pool-spec.validator.js';

type Tx = Prisma.TransactionClient;

const withEverything = {
  desired: true,
  status: true,
  nodePools: { orderBy: { name: 'asc' } },
} satisfies Prisma.ClusterInclude;

export const hashToken = (token: string): string =>
  createHash('sha256').update(token).digest('hex');

const encodeCursor = (name: string) => Buffer.from(name, 'utf8').toString('base64url');
const decodeCursor = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8');

@Injectable()
export class ClustersService {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly queues: QueuesService,
    @Inject(NODE_POOL_SPEC_VALIDATOR) private readonly nodePoolSpecs: NodePoolSpecValidator,
  ) {
    this.db = prisma.client;
  }

  async get(id: string): Promise<Cluster> {
    return toCluster(await this.findRow(this.db, id));
  }

  async list(first: number, after: string | null | undefined, filter: ClusterFilter | null | undefined): Promise<ClusterConnection> {
    if (!Number.isInteger(first) || first < 1 || first > 100) {
      throw userInputError('first', 'must be between 1 and 100');
    }
    const where: Prisma.ClusterWhereInput = {
      ...(filter?.platform ? { platform: filter.platform } : {}),
      ...(filter?.topology ? { topology: filter.topology } : {}),
      ...(filter?.nameContains ? { name: { contains: filter.nameContains } } : {}),
      ...(filter?.karpenterEnabled != null ? { desired: { enabled: filter.karpenterEnabled } } : {}),
    };
    const page = after ? { ...where, name: { ...(where.name as object), gt: decodeCursor(after) } } : where;
    const [rows, totalCount] = await Promise.all([
      this.db.cluster.findMany({ where: page, include: withEverything, orderBy: { name: 'asc' }, take: first + 1 }),
      this.db.cluster.count({ where }),
    ]);
    const nodes = rows.slice(0, first).map(toCluster);
    return {
      edges: nodes.map((node) => ({ cursor: encodeCursor(node.name), node })),
      pageInfo: {
        hasNextPage: rows.length > first,
        endCursor: nodes.length ? encodeCursor(nodes[nodes.length - 1]!.name) : null,
      },
      totalCount,
    };
  }

  async register(input: RegisterClusterInput): Promise<{ cluster: Cluster; reportToken: string }> {
    const valid = parseInput(RegisterClusterSchema, input, 'input');
    const reportToken = randomBytes(32).toString('base64url');
    try {
      const row = await this.db.cluster.create({
        data: {
          name: valid.name,
          topology: valid.topology,
          platform: valid.platform,
          region: valid.region,
          infraID: valid.infraID ?? null,
          labels: valid.labels ?? {},
          managementCluster: valid.managementCluster ?? null,
          hcpNamespace: valid.hcpNamespace ?? null,
          reportTokenHash: hashToken(reportToken),
          desired: { create: {} },
          status: { create: {} },
          reconcileRuns: { create: { generation: 1 } },
        },
        include: withEverything,
      });
      // The first order tells the sidecar what "nothing enabled yet" means for this cluster.
      await this.queues.requestReconcile({ clusterId: row.id, generation: 1 });
      return { cluster: toCluster(row), reportToken };
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw userInputError('input.name', `a cluster named "${valid.name}" is already registered`);
      }
      throw err;
    }
  }

  async setKarpenter(clusterId: string, input: SetKarpenterInput): Promise<Cluster> {
    const valid = parseInput(SetKarpenterSchema, input, 'input');
    const changes: Prisma.DesiredStateUpdateInput = {};
    if (valid.enabled != null) changes.enabled = valid.enabled;
    if (valid.paused != null) changes.paused = valid.paused;
    if (valid.clusterAutoscalerMode != null) changes.clusterAutoscalerMode = valid.clusterAutoscalerMode;
    if (valid.logLevel != null) changes.logLevel = valid.logLevel;
    if (valid.featureGates != null) changes.featureGates = valid.featureGates;
    return this.changeDesiredState(clusterId, valid.expectedGeneration, async (tx) => {
      if (Object.keys(changes).length) await tx.desiredState.update({ where: { clusterId }, data: changes });
    });
  }

  async upsertNodePool(clusterId: string, input: UpsertNodePoolInput): Promise<Cluster> {
    const name = parseInput(NodePoolNameSchema, input.name, 'input.name');
    const expected = parseInput(ExpectedGeneration, input.expectedGeneration, 'input.expectedGeneration');
    const violation = this.nodePoolSpecs.validate(name, input.spec)[0];
    if (violation) throw userInputError(`input.spec${violation.field ? `.${violation.field}` : ''}`, violation.reason);
    const spec = input.spec as Prisma.InputJsonObject;
    return this.changeDesiredState(clusterId, expected, async (tx) => {
      await tx.nodePool.upsert({
        where: { clusterId_name: { clusterId, name } },
        create: { clusterId, name, spec },
        update: { spec },
      });
    });
  }

  async deleteNodePool(clusterId: string, name: string, expectedGeneration?: number | null): Promise<Cluster> {
    const expected = parseInput(ExpectedGeneration, expectedGeneration, 'expectedGeneration');
    return this.changeDesiredState(clusterId, expected, async (tx) => {
      const { count } = await tx.nodePool.deleteMany({ where: { clusterId, name } });
      if (count === 0) throw notFoundError('NodePool', name);
    });
  }

  /**
   * The one path by which desired state changes: the change, the generation bump and the
   * reconcile run commit together, then the worker is asked to reconcile. If Redis is down at
   * that moment the resync finds `generation > observedGeneration` and dispatches anyway.
   */
  private async changeDesiredState(
    clusterId: string,
    expectedGeneration: number | null | undefined,
    change: (tx: Tx) => Promise<void>,
  ): Promise<Cluster> {
    const row = await this.db.$transaction(async (tx) => {
      const current = await this.lockDesired(tx, clusterId);
      if (expectedGeneration != null && current !== expectedGeneration) {
        throw conflictError(
          `cluster ${clusterId} is at generation ${current}, not the expected ${expectedGeneration}`,
        );
      }
      await change(tx);
      const { generation } = await tx.desiredState.update({
        where: { clusterId },
        data: { generation: { increment: 1 } },
      });
      await tx.reconcileRun.create({ data: { clusterId, generation } });
      return this.findRow(tx, clusterId);
    });
    await this.queues.requestReconcile({ clusterId, generation: row.desired!.generation });
    return toCluster(row);
  }

  /** Row lock on the desired state, so concurrent mutations of one cluster serialize. */
  private async lockDesired(tx: Tx, clusterId: string): Promise<number> {
    if (!isUuid(clusterId)) throw userInputError('clusterId', 'must be a cluster ID (UUID)');
    const rows = await tx.$queryRaw<{ generation: number }[]>`
      SELECT generation FROM "DesiredState" WHERE "clusterId" = ${clusterId}::uuid FOR UPDATE`;
    const row = rows[0];
    if (!row) throw notFoundError('cluster', clusterId);
    return row.generation;
  }

  private async findRow(db: Tx | PrismaClient, id: string): Promise<ClusterRow> {
    if (!isUuid(id)) throw userInputError('id', 'must be a cluster ID (UUID)');
    const row = await db.cluster.findUnique({ where: { id }, include: withEverything });
    if (!row) throw notFoundError('cluster', id);
    return row;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (value: string) => UUID.test(value);
