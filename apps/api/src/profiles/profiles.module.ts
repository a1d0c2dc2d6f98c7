import { Module } from '@nestjs/common';
import { ClustersModule } from '../clusters/clusters.module.js';
import { RolloutsModule } from '../rollouts/rollouts.module.js';
import { ClusterEffectiveStateResolver, ProfilesResolver } from './profiles.resolver.js';
import { ProfilesService } from './profiles.service.js';

@Module({
  imports: [ClustersModule, RolloutsModule],
  providers: [ProfilesResolver, ClusterEffectiveStateResolver, ProfilesService],
})
export class ProfilesModule {}
