import { DateTimeScalar } from '../common/date-time.scalar.js';
import { Field, Mutation, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { ApiTokensService } from './api-tokens.service.js';
import { RoleEnum } from './api-token.model.js';
import { CurrentPrincipal } from './current-principal.decorator.js';
import { isOidcSession, type Principal } from './principal.js';
import { RequireRole } from './roles.decorator.js';

@ObjectType({ description: 'The caller: lets a client offer only what its token may do.' })
export class Viewer {
  @Field({ description: 'The API token name.' })
  name!: string;

  @Field(() => RoleEnum)
  role!: RoleEnum;

  @Field({ description: 'The token sees only clusters its label selector matches.' })
  scoped!: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'The label selector the token is limited to; null when it sees every cluster.',
  })
  labelSelector!: string | null;

  @Field(() => DateTimeScalar, { nullable: true, description: 'Null when it never expires.' })
  expiresAt!: Date | null;

  @Field({
    description:
      'A session opened by signing in with the identity provider (OIDC); it ends with the ID token.',
  })
  session!: boolean;
}

@Resolver(() => Viewer)
export class ViewerResolver {
  constructor(private readonly tokens: ApiTokensService) {}

  @Query(() => Viewer)
  @RequireRole('VIEWER')
  viewer(@CurrentPrincipal() principal: Principal): Viewer {
    return {
      name: principal.name,
      role: principal.role as RoleEnum,
      scoped: principal.scope !== null,
      labelSelector: principal.labelSelector,
      expiresAt: principal.expiresAt,
      session: isOidcSession(principal),
    };
  }

  @Mutation(() => Boolean, {
    description:
      "Ends the caller's session if it is one signing in with the identity provider opened (true); API tokens are left alone (false).",
  })
  @RequireRole('VIEWER')
  signOut(@CurrentPrincipal() principal: Principal): Promise<boolean> {
    return this.tokens.endSession(principal);
  }
}
