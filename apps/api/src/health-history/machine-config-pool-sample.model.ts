import { DateTimeScalar } from '../common/date-time.scalar.js';
import { Field, Int, ObjectType } from '@nestjs/graphql';
import { MachineConfigPoolStatus } from '../clusters/models/cluster.model.js';

@ObjectType({
  description:
    "The Karpenter MachineConfigPools as one report gave them (standalone OpenShift): each NodeClass's pool counts, rendered configuration and conditions.",
})
export class MachineConfigPoolSample {
  @Field(() => DateTimeScalar, { description: 'When the sidecar observed it.' })
  observedAt!: Date;

  @Field(() => Int, { description: 'The desired generation the sidecar had applied then.' })
  observedGeneration!: number;

  @Field(() => [MachineConfigPoolStatus], { description: 'One per NodeClass, by NodeClass name.' })
  pools!: MachineConfigPoolStatus[];
}
