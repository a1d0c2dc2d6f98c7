import { Field, ID, InterfaceType } from '@nestjs/graphql';

@InterfaceType('Node', {
  description: 'An object with a global ID, fetchable with node(id:).',
  resolveType: (value: { __typename?: string }) => value.__typename,
})
export abstract class Node {
  @Field(() => ID, { description: 'Opaque global ID.' })
  id!: string;
}
