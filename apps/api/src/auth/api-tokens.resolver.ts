import { Args, ID, Mutation, Query, Resolver } from '@nestjs/graphql';
import { ApiToken, CreateApiTokenInput, CreateApiTokenPayload } from './api-token.model.js';
import { ApiTokensService } from './api-tokens.service.js';
import { CurrentPrincipal } from './current-principal.decorator.js';
import type { Principal } from './principal.js';
import { RequireRole } from './roles.decorator.js';

@Resolver(() => ApiToken)
export class ApiTokensResolver {
  constructor(private readonly tokens: ApiTokensService) {}

  @Query(() => [ApiToken])
  @RequireRole('ADMIN')
  apiTokens(@CurrentPrincipal() principal: Principal): Promise<ApiToken[]> {
    return this.tokens.list(principal) as Promise<ApiToken[]>;
  }

  @Mutation(() => CreateApiTokenPayload)
  @RequireRole('ADMIN')
  async createApiToken(
    @Args('input') input: CreateApiTokenInput,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CreateApiTokenPayload> {
    const { token, secret } = await this.tokens.create(input, principal);
    return { token: token as ApiToken, secret };
  }

  @Mutation(() => ApiToken)
  @RequireRole('ADMIN')
  async revokeApiToken(
    @Args('id', { type: () => ID }) id: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ApiToken> {
    return (await this.tokens.revoke(id, principal)) as ApiToken;
  }
}
