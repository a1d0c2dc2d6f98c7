import { DateTimeScalar } from '../common/date-time.scalar.js';
import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import { Connection } from '../common/connection.js';
import { JSONScalar } from '../common/json.scalar.js';

@ObjectType({ description: 'A job that exhausted its attempts; kept until an admin redrives it.' })
export class DeadLetter {
  @Field(() => ID)
  id!: string;

  @Field({ description: 'The queue the job failed on, where a redrive puts it back.' })
  queue!: string;

  @Field({ description: "The failed job's ID on that queue." })
  jobId!: string;

  @Field()
  name!: string;

  @Field(() => JSONScalar)
  data!: unknown;

  @Field(() => Int)
  attempts!: number;

  @Field(() => Int)
  attemptsMade!: number;

  @Field()
  failedReason!: string;

  @Field(() => DateTimeScalar)
  failedAt!: Date;
}

@ObjectType()
export class DeadLetterConnection extends Connection('DeadLetter', DeadLetter) {}
