import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiTokensResolver } from './api-tokens.resolver.js';
import { ApiTokensService } from './api-tokens.service.js';
import { AuthGuard } from './auth.guard.js';
import { RateLimiterService } from './rate-limiter.service.js';
import { UnauthenticatedLimiter } from './unauthenticated-limiter.service.js';
import { ViewerResolver } from './viewer.resolver.js';

@Global()
@Module({
  providers: [
    ApiTokensService,
    RateLimiterService,
    UnauthenticatedLimiter,
    ApiTokensResolver,
    ViewerResolver,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [ApiTokensService, RateLimiterService, UnauthenticatedLimiter],
})
export class AuthModule {}
