import { Args, ID, Mutation, Query, Resolver } from '@nestjs/graphql';
import { notFoundError } from '../common/errors.js';
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
  apiTokens(): Promise<ApiToken[]> {
    return this.tokens.list() as Promise<ApiToken[]>;
  }

  @Mutation(() => CreateApiTokenPayload)
  @RequireRole('ADMIN')
  async createApiToken(
    @Args('input') input: CreateApiTokenInput,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CreateApiTokenPayload> {
    const { token, secret } = await this.tokens.create(input, principal.name);
    return { token: token as ApiToken, secret };
  }

  @Mutation(() => ApiToken)
  @RequireRole('ADMIN')
  async revokeApiToken(@Args('id', { type: () => ID }) id: string): Promise<ApiToken> {
    const token = await this.tokens.revoke(id);
    if (!token) throw notFoundError('active API token', id);
    return token as ApiToken;
  }
}
