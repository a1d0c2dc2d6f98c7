import { Module } from '@nestjs/common';
import { ClustersResolver } from './clusters.resolver.js';
import { ClustersService } from './clusters.service.js';
import { NODE_POOL_SPEC_VALIDATOR } from './node-pool-spec.validator.js';
import { CrdNodePoolSpecValidator } from './crd-node-pool-spec.validator.js';

@Module({
  providers: [
    ClustersResolver,
    ClustersService,
    { provide: NODE_POOL_SPEC_VALIDATOR, useFactory: () => CrdNodePoolSpecValidator.fromFixtures() },
  ],
  exports: [ClustersService],
})
export class ClustersModule {}
