import {
  INGEST_BODY_FIELD,
  INGEST_GROUP,
  INGEST_RECEIVED_AT_FIELD,
  INGEST_REPORT_FIELD,
  IngestedStatusReport,
  ingestKey,
  queueLabel,
  STATUS_INGEST_QUEUE,
  type DeadLetter,
} from '@fleet/contracts';
import type { RedisClient } from '@fleet/contracts';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { writeReportBatch, type IngestResult } from './report-batch-writer.js';
import { isDatabaseUnavailable } from './pg-pool.js';
import { readDigestFences, type DigestFences } from './liveness.js';

export interface ReportStreamOptions {
  /** Entries read (and written to PostgreSQL in one transaction) at a time. */
  batch: number;
  /** How long one XREADGROUP waits for entries before the loop looks around again. */
  blockMs: number;
  /** An entry delivered to a consumer that did not acknowledge it for this long is taken over. */
  claimIdleMs: number;
  /** Batches written at the same time (each one transaction on its own connection). */
  parallel: number;
  /** Deliveries after which an entry that still fails on its own is dead-lettered. */
  maxDeliveries: number;
  /**
   * A consumer of the group idle this long with no pending entry is removed from it: a worker
   * that died (or was scaled away) leaves its consumer behind, and the group would list every
   * replica ever started. Far longer than `claimIdleMs`: a live consumer reads every `blockMs`.
   */
  deadConsumerIdleMs: number;
}

type Entry = [id: string, fields: string[]];

interface Parsed {
  id: string;
  report: IngestedStatusReport;
}

export interface ReportStreamHooks {
  /**
   * After a batch committed (before its entries are acknowledged), with the digest fences of its
   * clusters read before it was written (none when they could not be read: then their digests
   * are deleted, which costs each sidecar one full report; see `forgetDigests`).
   */
  committed(
    reports: readonly IngestedStatusReport[],
    results: readonly IngestResult[],
    fences: DigestFences,
  ): void;
  /** An entry that cannot be recorded: kept for an operator, then acknowledged. */
  deadLetter(letter: DeadLetter): Promise<void>;
}

/**
 * Drains the report stream the API appends to (issue 19): a consumer group shared by every
 * worker replica, `XREADGROUP COUNT batch`, one transaction per batch (`writeReportBatch`), then
 * `XACK` + `XDEL`. An entry is acknowledged only after its batch committed, so a worker killed
 * mid-batch leaves its entries pending; any worker takes them over with `XAUTOCLAIM` once they
 * have been idle `claimIdleMs`, and writes them again (every statement of the batch is idempotent
 * for a re-sent report). A batch that fails is written report by report; a report that fails on
 * its own stays pending and is retried at each claim, and after `maxDeliveries` deliveries it is
 * dead-lettered (as the BullMQ queue did after 20 attempts).
 */
export class ReportStreamConsumer {
  readonly consumer = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly key: string;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private nextClaimAt = 0;

  /**
   * @param reader a connection of its own: XREADGROUP blocks it.
   * @param commands acknowledgements, claims and dead letters.
   */
  constructor(
    private readonly reader: RedisClient,
    private readonly commands: RedisClient,
    private readonly pool: pg.Pool,
    private readonly prefix: string,
    private readonly log: Logger,
    private readonly hooks: ReportStreamHooks,
    private readonly options: ReportStreamOptions,
  ) {
    this.key = ingestKey(prefix, 'reports');
  }

  async start(): Promise<void> {
    try {
      // From the start of the stream: entries appended before any worker existed are drained too.
      await this.commands.xgroup('CREATE', this.key, INGEST_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String(err).includes('BUSYGROUP')) throw err;
    }
    this.running = true;
    this.loop = this.run();
  }

  async close(): Promise<void> {
    this.running = false;
    // The blocking read returns within blockMs; the batches in flight finish and acknowledge.
    await this.loop;
    await Promise.all(this.inflight);
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (Date.now() >= this.nextClaimAt) {
          this.nextClaimAt = Date.now() + Math.max(500, this.options.claimIdleMs / 2);
          await this.claimAbandoned();
          await this.removeDeadConsumers();
        }
        const read = (await this.reader.xreadgroup(
          'GROUP',
          INGEST_GROUP,
          this.consumer,
          'COUNT',
          this.options.batch,
          'BLOCK',
          this.options.blockMs,
          'STREAMS',
          this.key,
          '>',
        )) as [string, Entry[]][] | null;
        const entries = read?.[0]?.[1] ?? [];
        if (entries.length) await this.dispatch(entries);
      } catch (err) {
        if (!this.running) break;
        // The group is gone with a flushed Redis: make it again, then go on.
        if (String(err).includes('NOGROUP')) {
          await this.commands
            .xgroup('CREATE', this.key, INGEST_GROUP, '0', 'MKSTREAM')
            .catch(() => undefined);
        } else {
          this.log.warn({ err: String(err) }, 'report stream read failed');
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Entries of consumers that died (or of failures of ours), idle for claimIdleMs. */
  private async claimAbandoned(): Promise<void> {
    let cursor = '0-0';
    do {
      const [next, entries] = (await this.commands.xautoclaim(
        this.key,
        INGEST_GROUP,
        this.consumer,
        this.options.claimIdleMs,
        cursor,
        'COUNT',
        this.options.batch,
      )) as [string, Entry[], ...unknown[]];
      // Deleted entries come back as nil fields: nothing left to write.
      const live = entries.filter(([, fields]) => Array.isArray(fields));
      if (live.length) {
        this.log.info({ entries: live.length }, 'report stream entries taken over');
        await this.dispatch(live);
      }
      cursor = next;
    } while (cursor !== '0-0' && this.running);
  }

  /** Consumers of workers gone for good (see `deadConsumerIdleMs`); never this one. */
  private async removeDeadConsumers(): Promise<void> {
    const removed = await removeIdleConsumers(
      this.commands,
      this.key,
      INGEST_GROUP,
      this.options.deadConsumerIdleMs,
      this.consumer,
    );
    if (removed.length)
      this.log.info({ consumers: removed }, 'idle report stream consumers removed from the group');
  }

  /** Writes a batch, at most `parallel` at once: reading goes on while one commits. */
  private async dispatch(entries: Entry[]): Promise<void> {
    while (this.inflight.size >= this.options.parallel) await Promise.race(this.inflight);
    const task = this.process(entries).catch((err: unknown) =>
      this.log.error({ err: String(err) }, 'report batch failed; its entries stay pending'),
    );
    this.inflight.add(task);
    void task.finally(() => this.inflight.delete(task));
  }

  private async process(entries: Entry[]): Promise<void> {
    const parsed: Parsed[] = [];
    const done: string[] = [];
    for (const [id, fields] of entries) {
      const report = this.parse(id, fields);
      if (report) parsed.push({ id, report });
      else {
        await this.deadLetter(id, fields, 'not a status report');
        done.push(id);
      }
    }
    if (parsed.length) {
      try {
        const reports = parsed.map((p) => p.report);
        const fences = await this.fences(reports);
        const results = await writeReportBatch(this.pool, reports);
        this.hooks.committed(reports, results, fences);
        done.push(...parsed.map((p) => p.id));
      } catch (err) {
        if (parsed.length > 1) {
          this.log.warn(
            { err: String(err), reports: parsed.length },
            'batch failed; writing its reports one by one',
          );
        }
        done.push(...(await this.oneByOne(parsed)));
      }
    }
    await this.acknowledge(done);
  }

  /** Each report on its own: only a bad one fails, and stays pending for the next claim. */
  private async oneByOne(parsed: Parsed[]): Promise<string[]> {
    const done: string[] = [];
    await Promise.all(
      parsed.map(async ({ id, report }) => {
        try {
          const fences = await this.fences([report]);
          const results = await writeReportBatch(this.pool, [report]);
          this.hooks.committed([report], results, fences);
          done.push(id);
        } catch (err) {
          // PostgreSQL away says nothing about the report: it waits, however long the outage,
          // and is never dead-lettered for it (claims during an outage count as deliveries).
          if (isDatabaseUnavailable(err)) {
            this.log.warn(
              { entry: id, cluster: report.clusterId, err: String(err) },
              'PostgreSQL unavailable; the report stays pending',
            );
            return;
          }
          const deliveries = await this.deliveries(id);
          if (deliveries >= this.options.maxDeliveries) {
            await this.deadLetter(id, [INGEST_REPORT_FIELD, JSON.stringify(report)], String(err));
            done.push(id);
          } else {
            this.log.warn(
              { entry: id, cluster: report.clusterId, deliveries, err: String(err) },
              'report not recorded; retried after the claim delay',
            );
          }
        }
      }),
    );
    return done;
  }

  /** Read before the write's transaction begins; none (digests then forgotten) if Redis fails. */
  private async fences(reports: readonly IngestedStatusReport[]): Promise<DigestFences> {
    try {
      return await readDigestFences(
        this.commands,
        this.prefix,
        reports.map((r) => r.clusterId),
      );
    } catch (err) {
      this.log.warn({ err: String(err) }, 'cannot read digest fences; digests forgotten');
      return new Map();
    }
  }

  private parse(id: string, fields: string[]): IngestedStatusReport | undefined {
    try {
      const parsed = IngestedStatusReport.safeParse(entryData(fields));
      return parsed.success ? parsed.data : undefined;
    } catch {
      this.log.error({ entry: id }, 'report stream entry is not JSON');
      return undefined;
    }
  }

  private async deliveries(id: string): Promise<number> {
    const pending = (await this.commands.xpending(this.key, INGEST_GROUP, id, id, 1)) as [
      string,
      string,
      number,
      number,
    ][];
    return pending[0]?.[3] ?? 1;
  }

  private async deadLetter(id: string, fields: string[], reason: string): Promise<void> {
    let data: unknown = fields;
    try {
      data = entryData(fields);
    } catch {
      // kept as the raw fields
    }
    await this.hooks.deadLetter({
      // Redriven onto the BullMQ ingest queue, which the workers still drain. Named by its label
      // (as the BullMQ workers' letters are): operators see `status-ingest`, not its hash tag.
      queue: queueLabel(STATUS_INGEST_QUEUE),
      jobId: `stream.${id}`,
      name: 'report',
      data,
      attempts: this.options.maxDeliveries,
      attemptsMade: this.options.maxDeliveries,
      failedReason: reason,
      failedAt: new Date().toISOString(),
    });
    this.log.error({ entry: id, reason }, 'report stream entry dead-lettered');
  }

  private async acknowledge(ids: string[]): Promise<void> {
    if (!ids.length) return;
    // Acknowledged entries are of no further use: deleted, so the stream holds only the backlog.
    await this.commands
      .pipeline()
      .xack(this.key, INGEST_GROUP, ...ids)
      .xdel(this.key, ...ids)
      .exec();
  }
}

/**
 * Removes from `group` every consumer idle for more than `idleMs` that holds no pending entry,
 * except `self`, in one script: nothing can be delivered to a consumer between the check and its
 * removal, so a consumer with pending entries is never removed (they stay for XAUTOCLAIM).
 * Returns the names removed.
 */
export async function removeIdleConsumers(
  redis: RedisClient,
  key: string,
  group: string,
  idleMs: number,
  self: string,
): Promise<string[]> {
  return (await redis.eval(
    REMOVE_IDLE_CONSUMERS_LUA,
    1,
    key,
    group,
    String(idleMs),
    self,
  )) as string[];
}

/** XINFO CONSUMERS answers each consumer as a flat list: name, pending, idle[, inactive]. */
const REMOVE_IDLE_CONSUMERS_LUA = `
local removed = {}
-- No stream or no group yet (a flushed Redis): nothing to remove.
local consumers = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if consumers['err'] then return removed end
for _, consumer in ipairs(consumers) do
  local info = {}
  for i = 1, #consumer, 2 do info[consumer[i]] = consumer[i + 1] end
  if info['name'] ~= ARGV[3] and tonumber(info['pending']) == 0
     and tonumber(info['idle']) > tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    removed[#removed + 1] = info['name']
  end
end
return removed`;

/** A field's value: entries are field, value, field, value... */
function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i < fields.length - 1; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/**
 * What an entry holds, as JSON.parse gives it (throws when it is not JSON): the body the API
 * validated with the time it received it, which overrides any `receivedAt` a body carries; or,
 * from entries appended before issue 48, the report the API had serialized.
 */
function entryData(fields: string[]): unknown {
  const body = field(fields, INGEST_BODY_FIELD);
  if (body === undefined) return JSON.parse(field(fields, INGEST_REPORT_FIELD) ?? 'null');
  const report = JSON.parse(body) as unknown;
  if (report === null || typeof report !== 'object' || Array.isArray(report)) return report;
  return { ...report, receivedAt: field(fields, INGEST_RECEIVED_AT_FIELD) };
}
