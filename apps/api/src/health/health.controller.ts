import { Controller, Get, HttpException, HttpStatus } from '@nestjs/common';
import { CONTRACT_VERSION, FLEET_RELEASE } from '@fleet/contracts';
import { Public } from '../auth/roles.decorator.js';
import { PrismaService } from '../database/prisma.service.js';
import { QueuesService } from '../queues/queues.service.js';

@Controller()
@Public()
export class HealthController {
  constructor(
    private readonly prisma: PrismaService,
    private readonly queues: QueuesService,
  ) {}

  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * The server's release and the newest sidecar order contract it speaks (`kfleet version`).
   * Public like /healthz: it helps diagnose a client that cannot authenticate.
   */
  @Get('version')
  version(): { version: string; contractVersion: number } {
    return { version: FLEET_RELEASE, contractVersion: CONTRACT_VERSION };
  }

  /** Ready only when both PostgreSQL and Redis answer. */
  @Get('readyz')
  async readyz(): Promise<{ status: 'ok' }> {
    const checks = await Promise.allSettled([
      this.prisma.client.$queryRaw`SELECT 1`,
      this.queues.ping(),
    ]);
    const failed = ['postgresql', 'redis'].filter((_, i) => checks[i]?.status === 'rejected');
    if (failed.length) {
      throw new HttpException({ status: 'unavailable', failed }, HttpStatus.SERVICE_UNAVAILABLE);
    }
    return { status: 'ok' };
  }
}
