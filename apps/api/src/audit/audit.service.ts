import { Injectable } from '@nestjs/common';
import type { Prisma } from '@fleet/database';
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
    await tx.auditEvent.create({
      data: {
        actor: principal.name,
        actorTokenId: principal.tokenId,
        action,
        clusterId,
        before: (before ?? undefined) as Prisma.InputJsonValue | undefined,
        after: (after ?? undefined) as Prisma.InputJsonValue | undefined,
      },
    });
  }
}
