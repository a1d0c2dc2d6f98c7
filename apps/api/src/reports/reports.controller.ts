import {
  Body,
  Controller,
  Headers,
  HttpCode,
  HttpException,
  HttpStatus,
  Ip,
  Param,
  Post,
} from '@nestjs/common';
import { findUnstorableText, PlanReport } from '@fleet/contracts';
import { Public } from '../auth/roles.decorator.js';
import { PlansService } from '../plans/plans.service.js';
import { ReportGate } from './report-gate.js';

/**
 * Where sidecars answer plans, with the cluster's own token and only for that cluster. Status
 * reports and heartbeats (`/v1/clusters/:id/status`, `/heartbeat`) do not come through Nest:
 * the lean route of `report-route.ts` takes them before Express (issue 19).
 */
@Public()
@Controller('v1/clusters/:clusterId')
export class ReportsController {
  constructor(
    private readonly gate: ReportGate,
    private readonly plans: PlansService,
  ) {}

  /**
   * A plan's result (issue 21 §1), beside the status report: the same cluster token, the same
   * per-cluster rate limit; recorded only for a PENDING entry of this cluster in that plan.
   */
  @Post('plans/:planId')
  @HttpCode(HttpStatus.ACCEPTED)
  async planReport(
    @Param('clusterId') clusterId: string,
    @Param('planId') planId: string,
    @Headers('authorization') authorization: string | undefined,
    @Ip() address: string | undefined,
    @Body() body: unknown,
  ): Promise<{ accepted: true }> {
    await this.gate.authenticate(clusterId, authorization, address ?? 'unknown');
    await this.gate.limit(clusterId);
    const parsed = PlanReport.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new HttpException(
        { error: 'BadRequest', field: issue?.path.join('.'), message: issue?.message },
        HttpStatus.BAD_REQUEST,
      );
    }
    const unstorable = findUnstorableText(body);
    if (unstorable) {
      throw new HttpException(
        { error: 'BadRequest', field: unstorable.path.join('.'), message: unstorable.reason },
        HttpStatus.BAD_REQUEST,
      );
    }
    if (parsed.data.clusterId !== clusterId || parsed.data.planId !== planId) {
      throw new HttpException(
        { error: 'Forbidden', message: 'a sidecar reports only for its own cluster' },
        HttpStatus.FORBIDDEN,
      );
    }
    if ((await this.plans.recordReport(parsed.data)) === 'unknown') {
      throw new HttpException(
        {
          error: 'Conflict',
          message: `plan ${planId} awaits no answer from cluster ${clusterId} at generation ${parsed.data.generation}`,
        },
        HttpStatus.CONFLICT,
      );
    }
    return { accepted: true };
  }
}
