import { Field, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { RoleEnum } from './api-token.model.js';
import { CurrentPrincipal } from './current-principal.decorator.js';
import type { Principal } from './principal.js';
import { RequireRole } from './roles.decorator.js';

@ObjectType({ description: 'The caller: lets a client offer only what its token may do.' })
export class Viewer {
  @Field({ description: 'The API token name.' })
  name!: string;

  @Field(() => RoleEnum)
  role!: RoleEnum;

  @Field({ description: 'The token sees only clusters its label selector matches.' })
  scoped!: boolean;
}

@Resolver(() => Viewer)
export class ViewerResolver {
  @Query(() => Viewer)
  @RequireRole('VIEWER')
  viewer(@CurrentPrincipal() principal: Principal): Viewer {
    return {
      name: principal.name,
      role: principal.role as RoleEnum,
      scoped: principal.scope !== null,
    };
  }
}
