import {
  Body,
  Controller,
  Headers,
  HttpCode,
  HttpException,
  HttpStatus,
  Param,
  Post,
} from '@nestjs/common';
import { StatusReport } from '@fleet/contracts';
import { timingSafeEqual } from 'node:crypto';
import { Public } from '../auth/roles.decorator.js';
import { hashToken } from '../clusters/clusters.service.js';
import { PrismaService } from '../database/prisma.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { QueuesService } from '../queues/queues.service.js';

/**
 * Where sidecars report. A report is accepted only with the cluster's own token and only for that
 * cluster; it is queued for the ingest workers, which apply it only if it moves status forward.
 */
/** Authenticated by the cluster's own report token, not an API token. */
@Public()
@Controller('v1/clusters/:clusterId/status')
export class ReportsController {
  constructor(
    private readonly prisma: PrismaService,
    private readonly queues: QueuesService,
    private readonly metrics: MetricsService,
  ) {}

  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  async report(
    @Param('clusterId') clusterId: string,
    @Headers('authorization') authorization: string | undefined,
    @Body() body: unknown,
  ): Promise<{ accepted: true }> {
    await this.authenticate(clusterId, authorization);
    const parsed = StatusReport.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new HttpException(
        { error: 'BadRequest', field: issue?.path.join('.'), message: issue?.message },
        HttpStatus.BAD_REQUEST,
      );
    }
    if (parsed.data.clusterId !== clusterId) {
      throw new HttpException(
        { error: 'Forbidden', message: 'a sidecar reports only for its own cluster' },
        HttpStatus.FORBIDDEN,
      );
    }
    await this.queues.ingestStatus(parsed.data);
    this.metrics.reportsReceived.inc();
    return { accepted: true };
  }

  private async authenticate(clusterId: string, authorization: string | undefined): Promise<void> {
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    const unauthorized = () =>
      new HttpException(
        { error: 'Unauthorized', message: 'a valid cluster token is required' },
        HttpStatus.UNAUTHORIZED,
      );
    if (!token || !/^[0-9a-f-]{36}$/i.test(clusterId)) throw unauthorized();
    const cluster = await this.prisma.client.cluster.findUnique({
      where: { id: clusterId },
      select: {
        reportTokenHash: true,
        previousReportTokenHash: true,
        previousCredentialsExpireAt: true,
      },
    });
    if (!cluster) throw unauthorized();
    const presented = Buffer.from(hashToken(token), 'hex');
    const matches = (hash: string | null) =>
      hash !== null && timingSafeEqual(presented, Buffer.from(hash, 'hex'));
    const previousValid = (cluster.previousCredentialsExpireAt?.getTime() ?? 0) > Date.now();
    if (
      !matches(cluster.reportTokenHash) &&
      !(previousValid && matches(cluster.previousReportTokenHash))
    ) {
      throw unauthorized();
    }
  }
}
