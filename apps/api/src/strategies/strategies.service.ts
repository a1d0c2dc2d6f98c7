import { Injectable, Logger } from '@nestjs/common';
import { Prisma, type PrismaClient } from '@fleet/database';
import { dns1123Label } from '@fleet/contracts';
import { canonicalJson, StrategyDefinition } from '@fleet/desired-state';
import { AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { forbiddenError, notFoundError, parseInput, userInputError } from '../common/errors.js';
import { PrismaService } from '../database/prisma.service.js';
import type {
  CreateRolloutStrategyInput,
  RolloutStrategyDefinition,
  RolloutStrategySpecInput,
} from './strategy.model.js';

type StrategyRow = Prisma.RolloutStrategyGetPayload<object>;

/**
 * Named rollout strategies (docs/ROLLOUTS.md § Named strategies). They are fleet configuration,
 * not cluster state: any token may read them (they hold no cluster, so a scoped token learns
 * nothing of clusters outside its scope), and only an unscoped token may write them, since every
 * profile and rollout of the fleet may use one. A rollout copies its strategy at start, so writes
 * here never change a rollout already started.
 */
@Injectable()
export class StrategiesService {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly audit: AuditService,
  ) {
    this.db = prisma.client;
  }

  private readonly logger = new Logger(StrategiesService.name);

  /**
   * Every strategy that still reads as one. A stored row that no longer validates (written
   * before a rule tightened, or by hand) is left out with a warning naming it and why, rather
   * than failing the whole list; `rolloutStrategy(name)` and starting with it still refuse it.
   */
  async list(): Promise<RolloutStrategyDefinition[]> {
    const rows = await this.db.rolloutStrategy.findMany({ orderBy: { name: 'asc' } });
    const listed: RolloutStrategyDefinition[] = [];
    for (const row of rows) {
      try {
        listed.push(toModel(row));
      } catch (err) {
        this.logger.warn(
          `rollout strategy ${row.name} no longer validates and is left out of rolloutStrategies: ${err instanceof Error ? err.message : String(err)}`.slice(
            0,
            2000,
          ),
        );
      }
    }
    return listed;
  }

  async get(name: string): Promise<RolloutStrategyDefinition> {
    const row = await this.db.rolloutStrategy.findUnique({ where: { name } });
    if (!row) throw notFoundError('rollout strategy', name);
    return toModel(row);
  }

  async create(
    principal: Principal,
    input: CreateRolloutStrategyInput,
  ): Promise<RolloutStrategyDefinition> {
    this.mayWrite(principal, 'create');
    const name = parseInput(dns1123Label, input.name, 'input.name');
    const { name: _name, ...spec } = input;
    const def = parseInput(StrategyDefinition, spec, 'input');
    const exists = () =>
      userInputError('input.name', `a rollout strategy named "${name}" already exists`);
    const row = await this.db
      .$transaction(async (tx) => {
        if (await tx.rolloutStrategy.findUnique({ where: { name } })) throw exists();
        const created = await tx.rolloutStrategy.create({
          data: { name, ...data(def), createdBy: principal.name },
        });
        await this.audit.record(
          tx,
          principal,
          'createRolloutStrategy',
          null,
          null,
          snapshot(created),
        );
        return created;
      })
      .catch((err: unknown) => {
        // Two creates of one name at once: both pass the check, the unique index refuses the second.
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
          throw exists();
        throw err;
      });
    return toModel(row);
  }

  /** Replaces the definition; rollouts already started keep the copy they took. */
  async update(
    principal: Principal,
    name: string,
    input: RolloutStrategySpecInput,
  ): Promise<RolloutStrategyDefinition> {
    this.mayWrite(principal, 'update');
    const def = parseInput(StrategyDefinition, input, 'input');
    const row = await this.db.$transaction(async (tx) => {
      const before = await tx.rolloutStrategy.findUnique({ where: { name } });
      if (!before) throw notFoundError('rollout strategy', name);
      if (canonicalJson(data(before)) === canonicalJson(data(def)))
        throw userInputError('input', 'changes nothing: the strategy already reads so');
      const after = await tx.rolloutStrategy.update({ where: { id: before.id }, data: data(def) });
      await this.audit.record(
        tx,
        principal,
        'updateRolloutStrategy',
        null,
        snapshot(before),
        snapshot(after),
      );
      return after;
    });
    return toModel(row);
  }

  async delete(principal: Principal, name: string): Promise<RolloutStrategyDefinition> {
    this.mayWrite(principal, 'delete');
    const row = await this.db.$transaction(async (tx) => {
      const before = await tx.rolloutStrategy.findUnique({ where: { name } });
      if (!before) throw notFoundError('rollout strategy', name);
      await tx.rolloutStrategy.delete({ where: { id: before.id } });
      await this.audit.record(tx, principal, 'deleteRolloutStrategy', null, snapshot(before), null);
      return before;
    });
    return toModel(row);
  }

  private mayWrite(principal: Principal, verb: string): void {
    if (principal.scope)
      throw forbiddenError(
        `token ${principal.name} is scoped (${principal.labelSelector ?? ''}); rollout strategies are fleet-wide configuration: ${verb} them with an unscoped token`,
      );
  }
}

/** The stored columns of a definition (also what an update is compared on). */
function data(def: {
  stages: unknown;
  maxFailures: number;
  waveTimeoutSeconds: number;
  maxNodeClaimLaunchFailures: number | null;
  maxPendingPodSeconds: number | null;
}) {
  return {
    stages: def.stages as Prisma.InputJsonArray,
    maxFailures: def.maxFailures,
    waveTimeoutSeconds: def.waveTimeoutSeconds,
    maxNodeClaimLaunchFailures: def.maxNodeClaimLaunchFailures,
    maxPendingPodSeconds: def.maxPendingPodSeconds,
  };
}

function snapshot(row: StrategyRow): Prisma.InputJsonObject {
  return { strategyId: row.id, name: row.name, ...data(row) };
}

function toModel(row: StrategyRow): RolloutStrategyDefinition {
  const def = StrategyDefinition.parse(row);
  return {
    name: row.name,
    stages: def.stages.map((s) => ({
      selector: s.selector ?? null,
      percent: s.percent ?? null,
      count: s.count ?? null,
      minHealthySeconds: s.minHealthySeconds,
      pauseSeconds: s.pauseSeconds,
      approval: s.approval,
    })),
    maxFailures: def.maxFailures,
    waveTimeoutSeconds: def.waveTimeoutSeconds,
    maxNodeClaimLaunchFailures: def.maxNodeClaimLaunchFailures,
    maxPendingPodSeconds: def.maxPendingPodSeconds,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
