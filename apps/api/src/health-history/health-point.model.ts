import { DateTimeScalar } from '../common/date-time.scalar.js';
import { Field, Float, Int, ObjectType } from '@nestjs/graphql';
import { JSONScalar } from '../common/json.scalar.js';

@ObjectType({
  description: 'Health of a cluster over one step of time, from raw samples or hourly roll-ups.',
})
export class HealthPoint {
  @Field(() => DateTimeScalar, { description: 'Start of the step.' })
  at!: Date;

  @Field(() => Int, { description: 'Reports in the step.' })
  samples!: number;

  @Field(() => Float, { description: 'Share of reports with Available=True (0–1).' })
  available!: number;

  @Field(() => Float, { description: 'Share of reports with Degraded=True (0–1).' })
  degraded!: number;

  @Field(() => Float, { description: 'Share of reports with Progressing=True (0–1).' })
  progressing!: number;

  @Field(() => Float, { nullable: true, description: 'Average node count.' })
  nodes!: number | null;

  @Field(() => Float, { nullable: true, description: 'Average vCPUs.' })
  vcpus!: number | null;

  @Field(() => JSONScalar, {
    nullable: true,
    description:
      'NodeClaims by state (Pending, Launched, Registered, Initialized, Ready, Terminating, …) averaged over the step\'s reports, e.g. {"Ready": 3, "Launched": 0.5}. From raw samples only (ranges up to 48 h within their retention); null from the hourly roll-ups, which keep no states.',
  })
  nodeClaimsByState!: Record<string, number> | null;
}
