import { Module } from '@nestjs/common';
import { ClustersResolver } from './clusters.resolver.js';
import { ClustersService } from './clusters.service.js';
import { KarpenterSpecValidator } from './karpenter-spec.validator.js';

@Module({
  providers: [
    ClustersResolver,
    ClustersService,
    { provide: KarpenterSpecValidator, useFactory: () => KarpenterSpecValidator.fromDirectory() },
  ],
  exports: [ClustersService],
})
export class ClustersModule {}
