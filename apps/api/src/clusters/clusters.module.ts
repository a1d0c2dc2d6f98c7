import { Module } from '@nestjs/common';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { ClusterActivityResolver } from './cluster-activity.resolver.js';
import { ClustersResolver } from './clusters.resolver.js';
import { ClusterQueries } from './cluster-queries.service.js';
import { ClusterRegistration } from './cluster-registration.service.js';
import { DesiredStateChanges } from './desired-state-changes.service.js';
import { SidecarCredentialsService } from '../credentials/sidecar-credentials.service.js';
import { KarpenterSpecValidator } from './karpenter-spec.validator.js';

@Module({
  providers: [
    ClustersResolver,
    ClusterActivityResolver,
    ClusterQueries,
    ClusterRegistration,
    DesiredStateChanges,
    SidecarCredentialsService,
    {
      provide: KarpenterSpecValidator,
      inject: [API_CONFIG],
      useFactory: (config: ApiConfig) =>
        KarpenterSpecValidator.fromDirectory(config.KARPENTER_CRD_DIR),
    },
  ],
  exports: [ClusterQueries, KarpenterSpecValidator, DesiredStateChanges],
})
export class ClustersModule {}
