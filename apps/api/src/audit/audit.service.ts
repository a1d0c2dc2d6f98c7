import { Injectable } from '@nestjs/common';
import type { Prisma } from '@fleet/database';
import { recordAudit } from '@fleet/desired-state';
import type { Principal } from '../auth/principal.js';

/** Writes the audit trail inside the caller's transaction: no change without its record. */
@Injectable()
export class AuditService {
  async record(
    tx: Prisma.TransactionClient,
    principal: Principal,
    action: string,
    clusterId: string | null,
    before: unknown,
    after: unknown,
  ): Promise<void> {
    await recordAudit(tx, principal, action, clusterId, before, after);
  }
}
