import { Controller, Get, HttpException, HttpStatus } from '@nestjs/common';
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
