import { DateTimeScalar } from '../../common/date-time.scalar.js';
import { Field, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { Connection } from '../../common/connection.js';
import { JSONScalar } from '../../common/json.scalar.js';

export enum ReconcileRunState {
  QUEUED = 'QUEUED',
  DISPATCHED = 'DISPATCHED',
  APPLIED = 'APPLIED',
  FAILED = 'FAILED',
  SUPERSEDED = 'SUPERSEDED',
}
registerEnumType(ReconcileRunState, { name: 'ReconcileRunState' });

@ObjectType({ description: 'One generation of desired state on its way to the cluster.' })
export class ReconcileRun {
  @Field(() => Int)
  generation!: number;

  @Field(() => ReconcileRunState)
  state!: ReconcileRunState;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  dispatchedAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  finishedAt!: Date | null;
}

@ObjectType({ description: "A decision of the cluster's CSR approver." })
export class CsrDecision {
  @Field()
  csrName!: string;

  @Field(() => String, { nullable: true })
  nodeName!: string | null;

  @Field()
  signerName!: string;

  @Field({ description: 'Approved, Ignored or Denied.' })
  decision!: string;

  @Field()
  reason!: string;

  @Field()
  message!: string;

  @Field(() => DateTimeScalar)
  decidedAt!: Date;
}

@ObjectType({
  description:
    'CSR decisions of one decision and reason in one step of time. Steps with no decision have no row: a chart shows them as nothing decided, which is what happened (the approver reports every decision it makes).',
})
export class CsrDecisionBucket {
  @Field(() => DateTimeScalar, { description: 'Start of the step.' })
  at!: Date;

  @Field({ description: 'Approved, Ignored or Denied.' })
  decision!: string;

  @Field()
  reason!: string;

  @Field(() => Int)
  count!: number;
}

@ObjectType({ description: 'Who changed what, when; before and after.' })
export class AuditEvent {
  @Field(() => DateTimeScalar)
  at!: Date;

  @Field()
  actor!: string;

  @Field()
  action!: string;

  @Field(() => JSONScalar, { nullable: true })
  before!: unknown;

  @Field(() => JSONScalar, { nullable: true })
  after!: unknown;
}

@ObjectType()
export class ReconcileRunConnection extends Connection('ReconcileRun', ReconcileRun) {}
@ObjectType()
export class CsrDecisionConnection extends Connection('CsrDecision', CsrDecision) {}
@ObjectType()
export class AuditEventConnection extends Connection('AuditEvent', AuditEvent) {}
