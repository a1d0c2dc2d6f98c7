import { DateTimeScalar } from '../common/date-time.scalar.js';
import { Field, ID, InputType, ObjectType, registerEnumType } from '@nestjs/graphql';

export enum RoleEnum {
  VIEWER = 'VIEWER',
  OPERATOR = 'OPERATOR',
  ADMIN = 'ADMIN',
}
registerEnumType(RoleEnum, {
  name: 'Role',
  description:
    'VIEWER reads; OPERATOR also changes clusters; ADMIN also manages tokens and registrations.',
});

@ObjectType()
export class ApiToken {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;

  @Field(() => RoleEnum)
  role!: RoleEnum;

  @Field(() => String, { nullable: true, description: 'Clusters this token is limited to.' })
  labelSelector!: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  expiresAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  lastUsedAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  revokedAt!: Date | null;

  @Field(() => DateTimeScalar)
  createdAt!: Date;
}

@ObjectType()
export class CreateApiTokenPayload {
  @Field(() => ApiToken)
  token!: ApiToken;

  @Field({ description: 'The bearer secret. Shown once; only its hash is stored.' })
  secret!: string;
}

@InputType()
export class CreateApiTokenInput {
  @Field()
  name!: string;

  @Field(() => RoleEnum)
  role!: RoleEnum;

  @Field(() => String, { nullable: true })
  labelSelector?: string | null;

  @Field(() => DateTimeScalar, { nullable: true })
  expiresAt?: Date | null;
}
