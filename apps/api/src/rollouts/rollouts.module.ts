import { Module } from '@nestjs/common';
import { KarpenterSpecValidator } from '../clusters/karpenter-spec.validator.js';
import { RolloutsResolver } from './rollouts.resolver.js';
import { RolloutsService } from './rollouts.service.js';

@Module({
  providers: [
    RolloutsResolver,
    RolloutsService,
    { provide: KarpenterSpecValidator, useFactory: () => KarpenterSpecValidator.fromDirectory() },
  ],
  exports: [RolloutsService],
})
export class RolloutsModule {}
