import { Module } from '@nestjs/common';
import { ClusterActivityResolver } from './cluster-activity.resolver.js';
import { ClustersResolver } from './clusters.resolver.js';
import { ClustersService } from './clusters.service.js';
import { SidecarCredentialsService } from '../credentials/sidecar-credentials.service.js';
import { KarpenterSpecValidator } from './karpenter-spec.validator.js';

@Module({
  providers: [
    ClustersResolver,
    ClusterActivityResolver,
    ClustersService,
    SidecarCredentialsService,
    { provide: KarpenterSpecValidator, useFactory: () => KarpenterSpecValidator.fromDirectory() },
  ],
  exports: [ClustersService],
})
export class ClustersModule {}
